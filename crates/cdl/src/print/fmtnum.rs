//! Number formatting byte-identical to C's `printf("%.*g")` (and ncdump's `%#.*g` with trailing
//! zeros stripped, used for attributes), plus fast integer formatting.
//!
//! The fast path scales the value by an exactly representable power of ten (one rounding) and
//! rounds; when the scaled value lies too close to a rounding tie for that to be certain, or the
//! scale is out of the exact range, it falls back to Rust's exact `{:.*e}` formatting, which
//! rounds the exact binary value half-to-even as glibc's printf does.

/// Exact powers of ten representable in an f64 (10^0 ..= 10^22).
const P10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Powers of ten as integers (10^0 ..= 10^19).
const U10: [u64; 20] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    100_000_000_000,
    1_000_000_000_000,
    10_000_000_000_000,
    100_000_000_000_000,
    1_000_000_000_000_000,
    10_000_000_000_000_000,
    100_000_000_000_000_000,
    1_000_000_000_000_000_000,
    10_000_000_000_000_000_000,
];

/// Append the decimal text of an unsigned integer.
pub(crate) fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Append the decimal text of a signed integer.
pub(crate) fn push_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    push_u64(out, v.unsigned_abs());
}

/// Fast path: `None` when the rounding cannot be decided cheaply.
fn fast_digits(v: f64, p: usize) -> Option<(u64, i32)> {
    // floor(log10(v)) estimate from the binary exponent; corrected below.
    let bits = v.to_bits();
    let be = ((bits >> 52) & 0x7ff) as i32;
    if be == 0 {
        return None; // subnormal
    }
    let e2 = be - 1023;
    // log10(2) ~ 0.30103; floor(e2 * log10 2) possibly one too small for the mantissa part.
    let mut e10 = (e2 * 78913).div_euclid(1 << 18);
    let lo = U10[p - 1] as f64;
    let hi = U10[p] as f64;
    for _ in 0..3 {
        let k = p as i32 - 1 - e10;
        let s = if (0..=22).contains(&k) {
            v * P10[k as usize]
        } else if (-22..0).contains(&k) {
            v / P10[(-k) as usize]
        } else {
            return None;
        };
        if s >= hi {
            e10 += 1;
            continue;
        }
        if s < lo {
            e10 -= 1;
            continue;
        }
        // s is positive and below 10^15: truncation is floor, and cheaper than libm's floor
        let mut d = s as u64;
        let frac = s - d as f64;
        // one rounding in the scaling: error at most half an ulp of s; keep a wide margin
        let tol = s * 4.5e-16 + 1e-300;
        let off = frac - 0.5;
        let up = if off.abs() > tol {
            off > 0.0
        } else if k >= 0 {
            // the product's rounding error is exact with a fused multiply-add:
            // v * 10^k == s + err, so the exact fraction is frac + err
            let err = v.mul_add(P10[k as usize], -s);
            let t = off + err;
            if t == 0.0 {
                d % 2 == 1 // an exact tie rounds half to even, as printf does
            } else {
                t > 0.0
            }
        } else {
            return None;
        };
        if up {
            d += 1;
        }
        let mut e = e10;
        if d >= U10[p] {
            d /= 10;
            e += 1;
        }
        return Some((d, e));
    }
    None
}

/// Exact digits via Rust's correctly rounded (half-to-even) scientific formatting.
fn exact_digits(v: f64, p: usize, digits: &mut Vec<u8>) -> i32 {
    let s = format!("{:.*e}", p.saturating_sub(1), v);
    let (mant, exp) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    digits.extend(mant.bytes().filter(u8::is_ascii_digit));
    exp.parse::<i32>().unwrap_or(0)
}

/// Append `v` formatted as C's `printf("%.{p}g")`; with `alt`, as `%#.{p}g` with trailing zeros
/// of the fraction removed but the decimal point kept (ncdump's attribute style: `1.`, `1.e+30`).
/// Infinities and NaN are written as C would (`inf`, `nan`); callers handle them first.
pub(crate) fn push_g(out: &mut Vec<u8>, v: f64, p: usize, alt: bool) {
    let p = p.max(1);
    if v.is_nan() {
        out.extend_from_slice(if v.is_sign_negative() {
            b"-nan"
        } else {
            b"nan"
        });
        return;
    }
    if v.is_sign_negative() {
        out.push(b'-');
    }
    let a = v.abs();
    if a.is_infinite() {
        out.extend_from_slice(b"inf");
        return;
    }
    // digits on the stack for the usual precisions, on the heap for very large `-p` values
    let mut stack = [b'0'; 20];
    let mut heap = Vec::new();
    let (digits, e): (&[u8], i32) = if a == 0.0 {
        if p <= stack.len() {
            (&stack[..p], 0)
        } else {
            heap.resize(p, b'0');
            (&heap[..], 0)
        }
    } else if let Some((d, e)) = if p <= 15 { fast_digits(a, p) } else { None } {
        let mut x = d;
        for i in (0..p).rev() {
            stack[i] = b'0' + (x % 10) as u8;
            x /= 10;
        }
        (&stack[..p], e)
    } else {
        let e = exact_digits(a, p, &mut heap);
        (&heap[..], e)
    };
    if digits.len() <= 24 {
        // lay the text out on the stack and append it in one copy
        let mut st = Stack { b: [0; 40], n: 0 };
        layout(&mut st, digits, e, p, alt);
        out.extend_from_slice(&st.b[..st.n]);
    } else {
        layout(out, digits, e, p, alt);
    }
}

/// Where [`layout`] writes.
trait Sink {
    fn put(&mut self, c: u8);
    fn put_all(&mut self, s: &[u8]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, c: u8) {
        self.push(c);
    }
    fn put_all(&mut self, s: &[u8]) {
        self.extend_from_slice(s);
    }
}

/// A fixed buffer big enough for any number with up to 24 significant digits.
struct Stack {
    b: [u8; 40],
    n: usize,
}

impl Sink for Stack {
    fn put(&mut self, c: u8) {
        self.b[self.n] = c;
        self.n += 1;
    }
    fn put_all(&mut self, s: &[u8]) {
        self.b[self.n..self.n + s.len()].copy_from_slice(s);
        self.n += s.len();
    }
}

/// `%g` layout of `digits` (exactly `p` of them) with decimal exponent `e`.
fn layout(out: &mut impl Sink, digits: &[u8], e: i32, p: usize, alt: bool) {
    if e < -4 || e >= p as i32 {
        // exponential: d.ddd e±XX
        out.put(digits[0]);
        let frac = trim_zeros(&digits[1..]);
        if !frac.is_empty() || alt {
            out.put(b'.');
        }
        out.put_all(frac);
        out.put(b'e');
        out.put(if e < 0 { b'-' } else { b'+' });
        let ae = e.unsigned_abs();
        if ae >= 100 {
            out.put(b'0' + (ae / 100) as u8);
        }
        out.put(b'0' + (ae / 10 % 10) as u8);
        out.put(b'0' + (ae % 10) as u8);
    } else if e >= 0 {
        let int_len = e as usize + 1;
        out.put_all(&digits[..int_len]);
        let frac = trim_zeros(&digits[int_len..]);
        if !frac.is_empty() || alt {
            out.put(b'.');
        }
        out.put_all(frac);
    } else {
        out.put(b'0');
        let frac = trim_zeros(digits);
        if frac.is_empty() {
            // only when v == 0, handled above with e == 0
            if alt {
                out.put(b'.');
            }
            return;
        }
        out.put(b'.');
        for _ in 0..(-e - 1) {
            out.put(b'0');
        }
        out.put_all(frac);
    }
}

fn trim_zeros(d: &[u8]) -> &[u8] {
    let mut n = d.len();
    while n > 0 && d[n - 1] == b'0' {
        n -= 1;
    }
    &d[..n]
}

#[cfg(test)]
mod tests {
    #![allow(unsafe_code)]
    #![allow(clippy::approx_constant)] // digits chosen to test rounding
    use super::*;

    fn libc_g(v: f64, p: usize, alt: bool) -> String {
        let fmt = if alt { "%#.*g\0" } else { "%.*g\0" };
        let mut buf = [0u8; 128];
        // SAFETY: buf is 128 bytes and its length is passed; the format takes an int and a double.
        let n = unsafe {
            libc::snprintf(
                buf.as_mut_ptr().cast(),
                buf.len(),
                fmt.as_ptr().cast(),
                p as libc::c_int,
                v,
            )
        };
        let s = String::from_utf8_lossy(&buf[..n as usize]).into_owned();
        if alt {
            // ncdump strips trailing zeros of the fraction, keeping the point
            if let Some((m, e)) = s.split_once('e') {
                format!("{}e{}", m.trim_end_matches('0'), e)
            } else {
                s.trim_end_matches('0').to_string()
            }
        } else {
            s
        }
    }

    fn ours(v: f64, p: usize, alt: bool) -> String {
        let mut o = Vec::new();
        push_g(&mut o, v, p, alt);
        String::from_utf8(o).unwrap()
    }

    /// A small xorshift generator, so the test needs no extra crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    #[test]
    fn fixed_cases() {
        for &(v, p) in &[
            (0.0, 7),
            (-0.0, 7),
            (1.0, 7),
            (0.1, 15),
            (1e30, 7),
            (1e-5, 7),
            (123456789.0, 7),
            (1234.5625, 7),
            (0.5, 1),
            (2.5, 1),
            (9.9999999, 7),
            (99999995.0, 7),
            (1e22, 15),
            (1e23, 15),
            (5e-324, 15),
            (1.7976931348623157e308, 15),
            (0.0001, 7),
            (0.00001, 7),
            (123456.7, 7),
            (1234567.0, 7),
            (12345678.0, 7),
            (f64::from(0.1f32), 7),
            (3.141592653589793, 15),
            (1.0000000000000002, 15),
            (3.141592653589793, 20),
        ] {
            for alt in [false, true] {
                assert_eq!(
                    ours(v, p, alt),
                    libc_g(v, p, alt),
                    "v={v:e} p={p} alt={alt}"
                );
            }
        }
    }

    #[test]
    fn random_bits_match_libc() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        for i in 0..300_000 {
            let x = r.next();
            let v = if i % 2 == 0 {
                f64::from(f32::from_bits(x as u32))
            } else {
                f64::from_bits(x)
            };
            if !v.is_finite() {
                continue;
            }
            let p = if i % 2 == 0 { 7 } else { 15 };
            assert_eq!(ours(v, p, false), libc_g(v, p, false), "bits {x:x} p={p}");
            if i % 16 == 0 {
                assert_eq!(ours(v, p, true), libc_g(v, p, true), "alt bits {x:x}");
                let q = (x % 19) as usize + 1;
                assert_eq!(ours(v, q, false), libc_g(v, q, false), "p={q} bits {x:x}");
            }
        }
    }

    #[test]
    fn decimal_ties_match_libc() {
        // values with short decimal expansions hit the tie fallback
        let mut r = Rng(12345);
        for _ in 0..200_000 {
            let m = (r.next() % 100_000_000) as f64;
            let sc = (r.next() % 12) as i32 - 4;
            let v = m / 16.0 * 10f64.powi(sc);
            let vf = f64::from(v as f32);
            assert_eq!(ours(v, 7, false), libc_g(v, 7, false), "{v:e}");
            assert_eq!(ours(v, 15, false), libc_g(v, 15, false), "{v:e}");
            assert_eq!(ours(vf, 7, false), libc_g(vf, 7, false), "{vf:e}");
        }
    }

    #[test]
    fn integers() {
        let mut o = Vec::new();
        push_i64(&mut o, i64::MIN);
        o.push(b' ');
        push_u64(&mut o, u64::MAX);
        o.push(b' ');
        push_i64(&mut o, 0);
        assert_eq!(
            String::from_utf8(o).unwrap(),
            "-9223372036854775808 18446744073709551615 0"
        );
    }

    #[test]
    #[ignore = "timing; run with --release -- --ignored --nocapture"]
    fn speed_vs_snprintf() {
        let mut r = Rng(777);
        let vals: Vec<f64> = (0..2_000_000)
            .map(|_| f64::from((r.next() % 1_000_000) as f32 / 37.0 - 300.0))
            .collect();
        let t = std::time::Instant::now();
        let mut o = Vec::with_capacity(vals.len() * 12);
        for &v in &vals {
            push_g(&mut o, v, 7, false);
        }
        let ours_s = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let mut n = 0usize;
        for &v in &vals {
            let mut buf = [0u8; 64];
            // SAFETY: buffer length passed; format takes an int and a double.
            n += unsafe {
                libc::snprintf(
                    buf.as_mut_ptr().cast(),
                    64,
                    c"%.*g".as_ptr(),
                    7 as libc::c_int,
                    v,
                )
            } as usize;
        }
        let libc_s = t.elapsed().as_secs_f64();
        println!(
            "ours: {:.1} Mvalues/s, snprintf: {:.1} Mvalues/s ({} {})",
            vals.len() as f64 / ours_s / 1e6,
            vals.len() as f64 / libc_s / 1e6,
            o.len(),
            n
        );
    }
}
