//! Lossy quantization of float and double data before compression, with netCDF-C's three
//! algorithms (netCDF 4.8+; the attributes `_QuantizeBitGroomNumberOfSignificantDigits`,
//! `_QuantizeGranularBitRoundNumberOfSignificantDigits`, `_QuantizeBitRoundNumberOfSignificantBits`).
//!
//! Each algorithm keeps `k` explicit mantissa bits of a value and clears (or, for BitGroom's
//! odd elements, sets) the others:
//! - **BitGroom** (`nsd` decimal digits): `k = ceil(nsd * log2 10) + 1`; elements at even
//!   positions are shaved (low bits cleared), at odd positions set (low bits set to one).
//! - **BitRound** (`nsd` = bits): `k = nsd`; half of the last kept bit's unit is added, then
//!   the low bits are cleared (round half away from zero in magnitude).
//! - **GranularBitRound** (`nsd` decimal digits): as BitRound with `k` computed per value from
//!   its decimal exponent (Delaunay, Goldberg and Guiochon 2019).
//!
//! The fill value (`_FillValue`, else the type's default), zeros and NaN are never changed;
//! nor are infinities (libnetcdf's BitGroom turns them into NaN at odd positions).
//! The bit patterns are those libnetcdf (4.9, 4.10) writes, with two differences where its
//! arithmetic leaves the algorithm (docs/compat.md): a rounding that would carry a finite
//! value into infinity (BitRound/GranularBitRound of values near the type's largest, e.g.
//! -3.4e38 with 3 digits) keeps the value shaved instead, the finite number nearest below it
//! in magnitude; and a value for which GranularBitRound asks more bits than the type has is
//! left as it is (libnetcdf shifts by a negative count there, undefined in C).
//!
//! BitGroom alternates by the element's position: here its row-major index in the whole
//! variable, which is the position netCDF4-python's `v[:] = data` and a whole-variable
//! `nc_put_var` give it in libnetcdf.

use crate::{AtomicType, QuantizeMode, Values};

/// log2(10): bits per decimal digit.
const BITS_PER_DIGIT: f64 = std::f64::consts::LN_10 / std::f64::consts::LN_2;
/// log10(2): decimal digits per bit.
const DIGITS_PER_BIT: f64 = std::f64::consts::LN_2 / std::f64::consts::LN_10;

/// The `nsd` values a mode accepts for a type (netCDF-C 4.10's limits).
pub fn nsd_range(mode: QuantizeMode, ty: AtomicType) -> Option<std::ops::RangeInclusive<u32>> {
    match (mode, ty) {
        (QuantizeMode::BitRound, AtomicType::Float) => Some(1..=23),
        (QuantizeMode::BitRound, AtomicType::Double) => Some(1..=52),
        (_, AtomicType::Float) => Some(1..=6),
        (_, AtomicType::Double) => Some(1..=15),
        _ => None,
    }
}

/// Why `mode` with `nsd` cannot quantize a variable of type `ty` (its name in messages), if
/// it cannot.
pub fn check(mode: QuantizeMode, nsd: u32, ty: AtomicType) -> Result<(), String> {
    let what = match mode {
        QuantizeMode::BitRound => "significant bits",
        _ => "significant digits",
    };
    match nsd_range(mode, ty) {
        None => Err(format!(
            "{} applies to float and double variables only, not {}",
            mode.attribute_name(),
            ty.cdl_name()
        )),
        Some(r) if !r.contains(&nsd) => Err(format!(
            "{} = {nsd} is out of range: a {} variable keeps {} to {} {what}",
            mode.attribute_name(),
            ty.cdl_name(),
            r.start(),
            r.end()
        )),
        Some(_) => Ok(()),
    }
}

/// The mode named in a command line: `BitGroom`, `GranularBitRound` (or `GranularBR`),
/// `BitRound` (any case).
pub fn parse_mode(name: &str) -> Option<QuantizeMode> {
    match name.to_ascii_lowercase().as_str() {
        "bitgroom" => Some(QuantizeMode::BitGroom),
        "granularbitround" | "granularbr" => Some(QuantizeMode::GranularBitRound),
        "bitround" => Some(QuantizeMode::BitRound),
        _ => None,
    }
}

/// One variable's quantization: its mode, digits or bits, and the fill value it leaves alone.
#[derive(Debug, Clone, Copy)]
pub struct Quantizer {
    mode: QuantizeMode,
    nsd: u32,
    fill: f64,
}

/// The masks keeping `keep` explicit mantissa bits of a type with `man` of them in a word of
/// `bits`: (shave: AND, set: OR, half: ADD). `None` when there is nothing to clear.
fn masks(keep: i64, man: i64, bits: u32) -> Option<(u64, u64, u64)> {
    let zero = man - keep;
    if zero <= 0 {
        return None;
    }
    let all = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let shave = (all << zero) & all;
    let set = !shave & all;
    let half = set & (shave >> 1);
    Some((shave, set, half))
}

impl Quantizer {
    /// A quantizer for a variable of type `ty` whose fill value is `fill` (its `_FillValue`,
    /// else the type's default: the caller passes it).
    ///
    /// # Errors
    /// As [`check`].
    pub fn new(mode: QuantizeMode, nsd: u32, ty: AtomicType, fill: f64) -> Result<Self, String> {
        check(mode, nsd, ty)?;
        Ok(Quantizer { mode, nsd, fill })
    }

    /// The explicit mantissa bits to keep for finite nonzero `x` (GranularBitRound: per value).
    fn keep(&self, x: f64) -> i64 {
        let nsd = i64::from(self.nsd);
        match self.mode {
            QuantizeMode::BitGroom => (nsd as f64 * BITS_PER_DIGIT).ceil() as i64 + 1,
            QuantizeMode::BitRound => nsd,
            QuantizeMode::GranularBitRound => {
                let (mnt, exp) = frexp(x);
                let mnt_log10 = mnt.abs().log10();
                let digits = (f64::from(exp) * DIGITS_PER_BIT + mnt_log10).floor() as i64 + 1;
                let qnt_pwr = (BITS_PER_DIGIT * (digits - nsd) as f64).floor() as i64;
                let bits =
                    ((f64::from(exp) - BITS_PER_DIGIT * mnt_log10).floor() as i64 - qnt_pwr).abs();
                // one bit fewer than the formula, as libnetcdf (and NCO) keep
                bits - 1
            }
        }
    }

    /// Quantize the bit pattern `b` of a value (`x` as a double) of a type with `man` explicit
    /// mantissa bits in `bits`-bit words; `index` is its row-major position (BitGroom).
    fn bits(&self, b: u64, x: f64, index: u64, man: i64, bits: u32) -> u64 {
        if x == self.fill || x == 0.0 || x.is_nan() || x.is_infinite() {
            return b;
        }
        let Some((shave, set, half)) = masks(self.keep(x), man, bits) else {
            return b;
        };
        match self.mode {
            QuantizeMode::BitGroom if index.is_multiple_of(2) => b & shave,
            QuantizeMode::BitGroom => b | set,
            _ => {
                let rounded = b.wrapping_add(half) & shave;
                // a carry into an all-ones exponent is infinity: keep the value finite
                let exp_mask = if bits == 32 {
                    0x7f80_0000
                } else {
                    0x7ff0 << 48
                };
                if rounded & exp_mask == exp_mask {
                    b & shave
                } else {
                    rounded
                }
            }
        }
    }

    /// `x` quantized as element `index` of a float variable.
    pub fn f32(&self, x: f32, index: u64) -> f32 {
        f32::from_bits(self.bits(u64::from(x.to_bits()), f64::from(x), index, 23, 32) as u32)
    }

    /// `x` quantized as element `index` of a double variable.
    pub fn f64(&self, x: f64, index: u64) -> f64 {
        f64::from_bits(self.bits(x.to_bits(), x, index, 52, 64))
    }

    /// Quantize `values` (a float or double hyperslab; other types are left alone) whose
    /// `i`-th element is element `index(i)` of the variable in row-major order.
    pub fn apply(&self, values: &mut Values, index: impl Fn(usize) -> u64) {
        match values {
            Values::Float(v) => v
                .iter_mut()
                .enumerate()
                .for_each(|(i, x)| *x = self.f32(*x, index(i))),
            Values::Double(v) => v
                .iter_mut()
                .enumerate()
                .for_each(|(i, x)| *x = self.f64(*x, index(i))),
            _ => {}
        }
    }
}

/// `x = m * 2^e` with `0.5 <= |m| < 1` (C's `frexp`), for finite nonzero `x`.
fn frexp(x: f64) -> (f64, i32) {
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        // subnormal: scale into the normal range first
        let (m, e) = frexp(x * f64::from_bits(0x4350_0000_0000_0000)); // 2^54
        return (m, e - 54);
    }
    let m = f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52));
    (m, exp - 1022)
}

/// The row-major index in a variable of `shape` of element `i` of the hyperslab
/// `start`/`count` (row-major too).
pub fn slab_index(shape: &[u64], start: &[u64], count: &[u64], i: usize) -> u64 {
    let mut rest = i as u64;
    let mut index = 0u64;
    let mut stride = 1u64;
    for d in (0..shape.len()).rev() {
        let c = count[d].max(1);
        let pos = start[d] + rest % c;
        rest /= c;
        index += pos * stride;
        stride *= shape[d];
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILL_F: f64 = 9.969_209_968_386_869e36;

    fn q(mode: QuantizeMode, nsd: u32, ty: AtomicType) -> Quantizer {
        Quantizer::new(
            mode,
            nsd,
            ty,
            if ty == AtomicType::Float {
                f64::from(FILL_F as f32)
            } else {
                FILL_F
            },
        )
        .unwrap()
    }

    #[test]
    fn frexp_is_cs() {
        assert_eq!(frexp(8.0), (0.5, 4));
        assert_eq!(frexp(-0.75), (-0.75, 0));
        assert_eq!(frexp(1.0), (0.5, 1));
        assert_eq!(frexp(5e-324), (0.5, -1073));
        assert_eq!(frexp(f64::MAX).1, 1024);
    }

    #[test]
    fn bit_patterns_of_libnetcdf() {
        // values and results from netCDF4-python 1.7 (netCDF-C 4.10.1)
        let br = q(QuantizeMode::BitRound, 5, AtomicType::Float);
        assert_eq!(br.f32(1.1, 0), 1.09375);
        assert_eq!(br.f32(4.4, 3), 4.375);
        let bg = q(QuantizeMode::BitGroom, 2, AtomicType::Double);
        // keep ceil(2 * 3.32) + 1 = 8 bits: even shaved, odd set
        assert_eq!(bg.f64(1.1, 0).to_bits(), 0x3ff1_9000_0000_0000);
        assert_eq!(bg.f64(1.1, 1).to_bits(), 0x3ff1_9fff_ffff_ffff);
        // fill, zero, NaN untouched
        assert_eq!(br.f32(FILL_F as f32, 0), FILL_F as f32);
        assert_eq!(br.f32(-0.0, 0).to_bits(), (-0.0f32).to_bits());
        assert!(br.f32(f32::NAN, 0).is_nan());
    }

    #[test]
    fn rounding_never_reaches_infinity() {
        // libnetcdf turns -3.4e38 into -inf here; we keep the value shaved, finite
        let g = q(QuantizeMode::GranularBitRound, 3, AtomicType::Float);
        let y = g.f32(-3.4e38, 0);
        assert!(y.is_finite() && y <= -3.0e38, "{y}");
        assert_eq!(y.to_bits() & 0x7fff, 0);
        let b = q(QuantizeMode::BitRound, 1, AtomicType::Double);
        assert!(b.f64(1.7e308, 0).is_finite());
        // elsewhere the rounding carries as it should
        assert_eq!(b.f64(1.75, 0), 2.0);
    }

    #[test]
    fn ranges_and_names() {
        assert!(check(QuantizeMode::BitGroom, 6, AtomicType::Float).is_ok());
        let e = check(QuantizeMode::BitGroom, 7, AtomicType::Float).unwrap_err();
        assert!(e.contains("keeps 1 to 6 significant digits"), "{e}");
        assert!(check(QuantizeMode::BitRound, 52, AtomicType::Double).is_ok());
        assert!(check(QuantizeMode::BitRound, 0, AtomicType::Double).is_err());
        let e = check(QuantizeMode::BitRound, 3, AtomicType::Int).unwrap_err();
        assert!(
            e.contains("float and double variables only, not int"),
            "{e}"
        );
        assert_eq!(
            parse_mode("GranularBR"),
            Some(QuantizeMode::GranularBitRound)
        );
        assert_eq!(parse_mode("bitround"), Some(QuantizeMode::BitRound));
        assert_eq!(parse_mode("round"), None);
    }

    #[test]
    fn slab_indices_are_row_major_in_the_variable() {
        // a 2 x 3 slab at (1, 1) of a 4 x 5 variable
        let idx: Vec<u64> = (0..6)
            .map(|i| slab_index(&[4, 5], &[1, 1], &[2, 3], i))
            .collect();
        assert_eq!(idx, [6, 7, 8, 11, 12, 13]);
        assert_eq!(slab_index(&[], &[], &[], 0), 0);
    }
}
