//! CF time units (`UNIT since DATE[ TIME][ ZONE]`, CF conventions §4.4) and the rebasing of
//! a record coordinate from one file's units to the first file's, as `ncrcat` rebases them.
//!
//! Units: seconds, minutes, hours and days (with their CF abbreviations); calendars:
//! `standard`/`gregorian`/`proleptic_gregorian` (counted proleptic Gregorian: the Julian
//! days before 1582-10-15 are not modelled), `noleap`/`365_day`, `all_leap`/`366_day` and
//! `360_day`.

use nc_dataset::Values;

/// A parsed `UNIT since DATE`: seconds per unit and the reference instant in seconds from
/// the calendar's year 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeUnits {
    /// Seconds in one unit.
    pub unit_seconds: f64,
    /// The reference date and time, in seconds from 0000-01-01 00:00 of the calendar.
    pub epoch_seconds: f64,
}

/// The calendars CF names that a rebase can count days in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calendar {
    /// `standard`, `gregorian`, `proleptic_gregorian` (or no `calendar` attribute).
    Gregorian,
    /// `noleap`, `365_day`.
    NoLeap,
    /// `all_leap`, `366_day`.
    AllLeap,
    /// `360_day`.
    Day360,
}

impl Calendar {
    /// The calendar a `calendar` attribute names (`None` attribute: standard); `None` when
    /// it is not one of CF's that this module counts.
    pub fn parse(att: Option<&str>) -> Option<Calendar> {
        let name = att.map(|s| s.trim().to_ascii_lowercase());
        Some(match name.as_deref() {
            None | Some("standard" | "gregorian" | "proleptic_gregorian" | "") => {
                Calendar::Gregorian
            }
            Some("noleap" | "365_day") => Calendar::NoLeap,
            Some("all_leap" | "366_day") => Calendar::AllLeap,
            Some("360_day") => Calendar::Day360,
            Some(_) => return None,
        })
    }

    /// Days from 0000-01-01 to `y-m-d` in this calendar; `None` for a month or day out of range.
    fn days(self, y: i64, m: u32, d: u32) -> Option<i64> {
        const CUM: [i64; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
        if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
            return None;
        }
        let mi = (m - 1) as usize;
        let d = i64::from(d) - 1;
        Some(match self {
            Calendar::Day360 => {
                if d >= 30 {
                    return None;
                }
                y * 360 + i64::from(m - 1) * 30 + d
            }
            Calendar::NoLeap => y * 365 + CUM[mi] + d,
            Calendar::AllLeap => y * 366 + CUM[mi] + if m > 2 { 1 } else { 0 } + d,
            Calendar::Gregorian => {
                let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
                // whole years before y: 365 each plus the leap days among years 0..y
                let before = |y: i64| {
                    let q = |n: i64| (y - 1).div_euclid(n) + 1;
                    if y > 0 {
                        y * 365 + q(4) - q(100) + q(400)
                    } else {
                        // years 0 and before: count backwards (year 0 is a leap year)
                        let k = -y;
                        -(k * 365 + k.div_euclid(4) - k.div_euclid(100) + k.div_euclid(400))
                    }
                };
                before(y) + CUM[mi] + if m > 2 && leap(y) { 1 } else { 0 } + d
            }
        })
    }
}

/// Seconds in one of the CF time unit words, `None` for any other word.
fn unit_seconds(word: &str) -> Option<f64> {
    Some(match word.to_ascii_lowercase().as_str() {
        "second" | "seconds" | "sec" | "secs" | "s" => 1.0,
        "minute" | "minutes" | "min" | "mins" => 60.0,
        "hour" | "hours" | "hr" | "hrs" | "h" => 3600.0,
        "day" | "days" | "d" => 86400.0,
        _ => return None,
    })
}

impl TimeUnits {
    /// Parse `UNIT since YYYY-MM-DD[( |T)hh:mm[:ss[.f]]][ Z|UTC|±hh[:mm]]` in `calendar`.
    /// `None` when it is not that shape.
    pub fn parse(text: &str, calendar: Calendar) -> Option<TimeUnits> {
        let mut words = text.split_whitespace();
        let unit = unit_seconds(words.next()?)?;
        if !words.next()?.eq_ignore_ascii_case("since") {
            return None;
        }
        let rest: Vec<&str> = words.collect();
        let (date, mut tail) = rest.split_first()?;
        let (date, time_in_date) = match date.split_once('T') {
            Some((d, t)) => (d, Some(t)),
            None => (*date, None),
        };
        let mut parts = date.splitn(3, '-');
        // a leading minus is a negative year
        let (neg, first) = match date.strip_prefix('-') {
            Some(r) => {
                parts = r.splitn(3, '-');
                (true, parts.next()?)
            }
            None => (false, parts.next()?),
        };
        let mut y: i64 = first.parse().ok()?;
        if neg {
            y = -y;
        }
        let m: u32 = parts.next().unwrap_or("1").parse().ok()?;
        let d: u32 = parts.next().unwrap_or("1").parse().ok()?;
        let days = calendar.days(y, m, d)?;
        let time = match time_in_date {
            Some(t) => Some(t),
            None => match tail.split_first() {
                Some((t, rest)) if t.contains(':') => {
                    tail = rest;
                    Some(*t)
                }
                _ => None,
            },
        };
        let mut secs = 0.0;
        if let Some(t) = time {
            let t = t.trim_end_matches('Z');
            let mut hms = t.split(':');
            let h: f64 = hms.next()?.parse().ok()?;
            let mi: f64 = hms.next().unwrap_or("0").parse().ok()?;
            let s: f64 = hms.next().unwrap_or("0").parse().ok()?;
            if hms.next().is_some() {
                return None;
            }
            secs = h * 3600.0 + mi * 60.0 + s;
        }
        // a time zone: Z, UTC, or an offset from UTC
        match tail {
            [] => {}
            [z] if z.eq_ignore_ascii_case("utc") || z.eq_ignore_ascii_case("z") => {}
            [off] => secs -= zone_seconds(off)?,
            _ => return None,
        }
        Some(TimeUnits {
            unit_seconds: unit,
            epoch_seconds: days as f64 * 86400.0 + secs,
        })
    }

    /// The scale and offset that take values in `self` to values in `to`:
    /// `v_to = v * scale + offset`.
    pub fn rebase_to(&self, to: &TimeUnits) -> Rebase {
        Rebase {
            scale: self.unit_seconds / to.unit_seconds,
            offset: (self.epoch_seconds - to.epoch_seconds) / to.unit_seconds,
        }
    }
}

/// `±hh[:mm]` or `±hhmm` as seconds east of UTC.
fn zone_seconds(text: &str) -> Option<f64> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1.0, &text[1..]),
        b'-' => (-1.0, &text[1..]),
        _ => (1.0, text),
    };
    let (h, m) = match rest.split_once(':') {
        Some((h, m)) => (h, m),
        None if rest.len() == 4 => rest.split_at(2),
        None => (rest, "0"),
    };
    let h: f64 = h.parse().ok()?;
    let m: f64 = m.parse().ok()?;
    Some(sign * (h * 3600.0 + m * 60.0))
}

/// `v * scale + offset`: a coordinate's values in another file's units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rebase {
    /// Factor from the file's unit to the first file's.
    pub scale: f64,
    /// The file's reference date in the first file's units.
    pub offset: f64,
}

impl Rebase {
    /// One value rebased.
    pub fn apply_one(&self, v: f64) -> f64 {
        v * self.scale + self.offset
    }

    /// Every value rebased, in its own type: integers are rounded to the nearest, ties to
    /// even (as C's `rint`, which ncrcat's integer record coordinates show). `None` for
    /// values that are not numbers.
    pub fn apply(&self, values: &Values) -> Option<Values> {
        fn map<T: Copy, F: Fn(T) -> T>(v: &[T], f: F) -> Vec<T> {
            v.iter().map(|&x| f(x)).collect()
        }
        let r = |x: f64| self.apply_one(x).round_ties_even();
        Some(match values {
            Values::Double(v) => Values::Double(map(v, |x| self.apply_one(x))),
            Values::Float(v) => Values::Float(map(v, |x| self.apply_one(f64::from(x)) as f32)),
            Values::Byte(v) => Values::Byte(map(v, |x| r(f64::from(x)) as i8)),
            Values::Short(v) => Values::Short(map(v, |x| r(f64::from(x)) as i16)),
            Values::Int(v) => Values::Int(map(v, |x| r(f64::from(x)) as i32)),
            Values::Int64(v) => Values::Int64(map(v, |x| r(x as f64) as i64)),
            Values::UByte(v) => Values::UByte(map(v, |x| r(f64::from(x)) as u8)),
            Values::UShort(v) => Values::UShort(map(v, |x| r(f64::from(x)) as u16)),
            Values::UInt(v) => Values::UInt(map(v, |x| r(f64::from(x)) as u32)),
            Values::UInt64(v) => Values::UInt64(map(v, |x| r(x as f64) as u64)),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(t: &str) -> TimeUnits {
        TimeUnits::parse(t, Calendar::Gregorian).unwrap()
    }

    #[test]
    fn days_between_dates_count_leap_years() {
        let a = units("days since 2000-01-01");
        let b = units("days since 2001-01-01");
        assert_eq!(
            b.rebase_to(&a),
            Rebase {
                scale: 1.0,
                offset: 366.0
            }
        );
        let c = units("days since 1900-03-01");
        let d = units("days since 1900-02-28");
        assert_eq!(c.rebase_to(&d).offset, 1.0); // 1900 is not a leap year
        let e = units("days since 1970-01-01 00:00:00");
        let f = units("seconds since 2000-01-01T00:00:00Z");
        assert_eq!(f.rebase_to(&e).offset, 10957.0);
        assert_eq!(f.rebase_to(&e).scale, 1.0 / 86400.0);
    }

    #[test]
    fn times_zones_and_units_convert() {
        let a = units("hours since 2000-01-01");
        let b = units("minutes since 2000-01-01 12:30");
        assert_eq!(
            b.rebase_to(&a),
            Rebase {
                scale: 1.0 / 60.0,
                offset: 12.5
            }
        );
        let c = units("hours since 2000-01-01 06:00 +06:00");
        assert_eq!(c.rebase_to(&a).offset, 0.0);
        assert_eq!(TimeUnits::parse("m", Calendar::Gregorian), None);
        assert_eq!(
            TimeUnits::parse("fortnights since 2000-01-01", Calendar::Gregorian),
            None
        );
        assert_eq!(
            TimeUnits::parse("days since 2000-13-01", Calendar::Gregorian),
            None
        );
    }

    #[test]
    fn model_calendars_count_their_own_days() {
        let p = |t: &str, c| TimeUnits::parse(t, c).unwrap();
        let n0 = p("days since 2000-01-01", Calendar::NoLeap);
        let n1 = p("days since 2001-01-01", Calendar::NoLeap);
        assert_eq!(n1.rebase_to(&n0).offset, 365.0);
        let d0 = p("days since 2000-01-01", Calendar::Day360);
        let d1 = p("days since 2000-03-01", Calendar::Day360);
        assert_eq!(d1.rebase_to(&d0).offset, 60.0);
        let l0 = p("days since 2001-01-01", Calendar::AllLeap);
        let l1 = p("days since 2001-03-01", Calendar::AllLeap);
        assert_eq!(l1.rebase_to(&l0).offset, 60.0);
        assert_eq!(Calendar::parse(Some("julian")), None);
    }

    #[test]
    fn integers_round_ties_to_even() {
        let r = Rebase {
            scale: 1.0,
            offset: 0.5,
        };
        assert_eq!(
            r.apply(&Values::Int(vec![0, 1, -1])),
            Some(Values::Int(vec![0, 2, -0]))
        );
        assert_eq!(
            r.apply(&Values::Double(vec![1.0])),
            Some(Values::Double(vec![1.5]))
        );
        assert_eq!(r.apply(&Values::Char(vec![b'a'])), None);
    }
}
