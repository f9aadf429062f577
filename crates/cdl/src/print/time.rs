//! `-t` / `-i`: CF time values (`units = "days since 2000-01-01"`, `calendar = ...`) shown as
//! ISO date-time strings the way ncdump prints them: the date, then ` HH`, ` HH:MM`,
//! ` HH:MM:SS` or ` HH:MM:S.ffffff` depending on what is non-zero.

use nc_dataset::{Dataset, Values, VarId};

use super::TimeMode;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Calendar {
    /// Julian before 1582-10-15, Gregorian after (`standard`, `gregorian`, no attribute).
    Mixed,
    ProlepticGregorian,
    Julian,
    NoLeap,
    AllLeap,
    Day360,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Unit {
    Seconds(f64),
    Months(f64),
}

/// A time variable's conversion from stored numbers to date-time text.
#[derive(Debug, Clone)]
pub(crate) struct TimeConv {
    cal: Calendar,
    unit: Unit,
    /// base date: day number in the calendar and seconds into that day
    base_day: i64,
    base_sec: f64,
    base_ymd: (i64, u32, u32),
    sep: u8,
}

fn text_att(ds: &Dataset, v: VarId, name: &str) -> Option<String> {
    let a = ds.var(v).att(name)?;
    match &a.values {
        Values::Char(b) => Some(
            String::from_utf8_lossy(b)
                .trim_end_matches('\0')
                .to_string(),
        ),
        Values::String(s) => s
            .first()
            .and_then(Option::as_ref)
            .map(|s| s.to_str_lossy().into_owned()),
        _ => None,
    }
}

impl TimeConv {
    /// The conversion for variable `v`, if it is a CF time variable (its own `units`, or those of
    /// a variable whose `bounds` attribute names it).
    pub(crate) fn for_var(ds: &Dataset, v: VarId, mode: TimeMode) -> Option<TimeConv> {
        let var = ds.var(v);
        var.ty.as_atomic().filter(|a| {
            a.is_integer()
                || matches!(
                    a,
                    nc_dataset::AtomicType::Float | nc_dataset::AtomicType::Double
                )
        })?;
        let owner = if text_att(ds, v, "units").is_some() {
            v
        } else {
            // a bounds variable uses its parent's units and calendar
            ds.group(var.group)
                .vars
                .iter()
                .copied()
                .find(|&o| text_att(ds, o, "bounds").as_deref() == Some(var.name.as_str()))?
        };
        let units = text_att(ds, owner, "units")?;
        let cal = match text_att(ds, owner, "calendar")
            .map(|c| c.trim().to_ascii_lowercase())
            .as_deref()
        {
            None | Some("standard") | Some("gregorian") => Calendar::Mixed,
            Some("proleptic_gregorian") => Calendar::ProlepticGregorian,
            Some("julian") => Calendar::Julian,
            Some("noleap") | Some("365_day") => Calendar::NoLeap,
            Some("all_leap") | Some("366_day") => Calendar::AllLeap,
            Some("360_day") => Calendar::Day360,
            Some(_) => return None,
        };
        let sep = if mode == TimeMode::IsoT { b'T' } else { b' ' };
        Self::parse(&units, cal, sep)
    }

    fn parse(units: &str, cal: Calendar, sep: u8) -> Option<TimeConv> {
        let lower = units.trim().to_ascii_lowercase();
        let (u, rest) = lower.split_once(" since ")?;
        let unit = match u.trim() {
            "seconds" | "second" | "secs" | "sec" | "s" => Unit::Seconds(1.0),
            "minutes" | "minute" | "mins" | "min" => Unit::Seconds(60.0),
            "hours" | "hour" | "hrs" | "hr" | "h" => Unit::Seconds(3600.0),
            "days" | "day" | "d" => Unit::Seconds(86400.0),
            "weeks" | "week" => Unit::Seconds(604_800.0),
            "months" | "month" => Unit::Months(1.0),
            "years" | "year" | "yr" => Unit::Months(12.0),
            _ => return None,
        };
        let rest = rest.trim();
        let (date, time) = match rest.find(['T', 't', ' ']) {
            Some(p) => (&rest[..p], rest[p + 1..].trim()),
            None => (rest, ""),
        };
        let mut dp = date.splitn(3, '-');
        let y: i64 = dp.next()?.trim().parse().ok()?;
        let m: u32 = dp.next().map_or(Some(1), |s| s.trim().parse().ok())?;
        let d: u32 = dp.next().map_or(Some(1), |s| s.trim().parse().ok())?;
        if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
            return None;
        }
        let time = time
            .trim_end_matches(['z', 'Z'])
            .split_whitespace()
            .next()
            .unwrap_or("");
        let mut tp = time.split(':');
        let h: f64 = tp
            .next()
            .filter(|s| !s.is_empty())
            .map_or(Some(0.0), |s| s.parse().ok())?;
        let mi: f64 = tp.next().map_or(Some(0.0), |s| s.parse().ok())?;
        let s: f64 = tp.next().map_or(Some(0.0), |s| s.parse().ok())?;
        Some(TimeConv {
            cal,
            unit,
            base_day: day_number(cal, y, m, d),
            base_sec: h * 3600.0 + mi * 60.0 + s,
            base_ymd: (y, m, d),
            sep,
        })
    }

    /// Append `"date[ time]"` for the stored value `x`.
    pub(crate) fn push(&self, out: &mut Vec<u8>, x: f64) {
        // beyond about 2.7 million years either way the calendar arithmetic would overflow;
        // such values are shown as plain numbers
        let limit_secs = 1e9 * 86400.0;
        let as_secs = match self.unit {
            Unit::Seconds(k) => x * k,
            Unit::Months(k) => x * k * 31.0 * 86400.0,
        };
        if !as_secs.is_finite() || as_secs.abs() > limit_secs {
            super::fmtnum::push_g(out, x, 15, false);
            return;
        }
        let (day, sec) = match self.unit {
            Unit::Seconds(k) => {
                let total = self.base_sec + x * k;
                let dd = (total / 86400.0).floor();
                (self.base_day + dd as i64, total - dd * 86400.0)
            }
            Unit::Months(k) => {
                let months = (x * k).round() as i64;
                let (y, m, d) = self.base_ymd;
                let mm = y * 12 + i64::from(m) - 1 + months;
                let ny = mm.div_euclid(12);
                let nm = (mm.rem_euclid(12) + 1) as u32;
                (day_number(self.cal, ny, nm, d), self.base_sec)
            }
        };
        // microsecond resolution, carried into the day
        let mut us = (sec * 1e6).round() as i64;
        let mut day = day;
        if us >= 86_400_000_000 {
            us -= 86_400_000_000;
            day += 1;
        }
        let (y, m, d) = from_day_number(self.cal, day);
        out.push(b'"');
        out.extend_from_slice(format!("{y:04}-{m:02}-{d:02}").as_bytes());
        let h = us / 3_600_000_000;
        let mi = (us / 60_000_000) % 60;
        let s_us = us % 60_000_000;
        if us != 0 {
            out.push(self.sep);
            out.extend_from_slice(format!("{h:02}").as_bytes());
            if mi != 0 || s_us != 0 {
                out.extend_from_slice(format!(":{mi:02}").as_bytes());
                if s_us != 0 {
                    if s_us % 1_000_000 == 0 {
                        out.extend_from_slice(format!(":{:02}", s_us / 1_000_000).as_bytes());
                    } else {
                        out.extend_from_slice(format!(":{:.6}", s_us as f64 / 1e6).as_bytes());
                    }
                }
            }
        }
        out.push(b'"');
    }
}

/// Julian day number of a proleptic Gregorian date.
fn jdn_gregorian(y: i64, m: u32, d: u32) -> i64 {
    let a = (14 - i64::from(m)) / 12;
    let yy = y + 4800 - a;
    let mm = i64::from(m) + 12 * a - 3;
    i64::from(d) + (153 * mm + 2) / 5 + 365 * yy + yy.div_euclid(4) - yy.div_euclid(100)
        + yy.div_euclid(400)
        - 32045
}

/// Julian day number of a Julian-calendar date.
fn jdn_julian(y: i64, m: u32, d: u32) -> i64 {
    let a = (14 - i64::from(m)) / 12;
    let yy = y + 4800 - a;
    let mm = i64::from(m) + 12 * a - 3;
    i64::from(d) + (153 * mm + 2) / 5 + 365 * yy + yy.div_euclid(4) - 32083
}

fn from_jdn_gregorian(j: i64) -> (i64, u32, u32) {
    let a = j + 32044;
    let b = (4 * a + 3).div_euclid(146_097);
    let c = a - 146_097 * b / 4;
    let d = (4 * c + 3) / 1461;
    let e = c - 1461 * d / 4;
    let m = (5 * e + 2) / 153;
    let day = e - (153 * m + 2) / 5 + 1;
    let month = m + 3 - 12 * (m / 10);
    let year = 100 * b + d - 4800 + m / 10;
    (year, month as u32, day as u32)
}

fn from_jdn_julian(j: i64) -> (i64, u32, u32) {
    let c = j + 32082;
    let d = (4 * c + 3).div_euclid(1461);
    let e = c - 1461 * d / 4;
    let m = (5 * e + 2) / 153;
    let day = e - (153 * m + 2) / 5 + 1;
    let month = m + 3 - 12 * (m / 10);
    let year = d - 4800 + m / 10;
    (year, month as u32, day as u32)
}

const NOLEAP: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const LEAP: [u32; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

fn fixed_year_day(y: i64, m: u32, d: u32, months: &[u32; 12]) -> i64 {
    let len: u32 = months.iter().sum();
    let before: u32 = months[..(m as usize - 1).min(11)].iter().sum();
    y * i64::from(len) + i64::from(before) + i64::from(d) - 1
}

fn from_fixed_year_day(n: i64, months: &[u32; 12]) -> (i64, u32, u32) {
    let len = i64::from(months.iter().sum::<u32>());
    let y = n.div_euclid(len);
    let mut r = n.rem_euclid(len) as u32;
    for (i, &ml) in months.iter().enumerate() {
        if r < ml {
            return (y, i as u32 + 1, r + 1);
        }
        r -= ml;
    }
    (y, 12, 31)
}

fn day_number(cal: Calendar, y: i64, m: u32, d: u32) -> i64 {
    match cal {
        Calendar::Mixed => {
            if (y, m, d) < (1582, 10, 15) {
                jdn_julian(y, m, d)
            } else {
                jdn_gregorian(y, m, d)
            }
        }
        Calendar::ProlepticGregorian => jdn_gregorian(y, m, d),
        Calendar::Julian => jdn_julian(y, m, d),
        Calendar::NoLeap => fixed_year_day(y, m, d, &NOLEAP),
        Calendar::AllLeap => fixed_year_day(y, m, d, &LEAP),
        Calendar::Day360 => y * 360 + (i64::from(m) - 1) * 30 + i64::from(d) - 1,
    }
}

fn from_day_number(cal: Calendar, n: i64) -> (i64, u32, u32) {
    match cal {
        // ncdump 4.9.0 still shows day 2299161 (1582-10-15) as Julian 1582-10-05
        Calendar::Mixed => {
            if n < 2_299_162 {
                from_jdn_julian(n)
            } else {
                from_jdn_gregorian(n)
            }
        }
        Calendar::ProlepticGregorian => from_jdn_gregorian(n),
        Calendar::Julian => from_jdn_julian(n),
        Calendar::NoLeap => from_fixed_year_day(n, &NOLEAP),
        Calendar::AllLeap => from_fixed_year_day(n, &LEAP),
        Calendar::Day360 => {
            let y = n.div_euclid(360);
            let r = n.rem_euclid(360);
            (y, (r / 30) as u32 + 1, (r % 30) as u32 + 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(units: &str, cal: Calendar, x: f64) -> String {
        let t = TimeConv::parse(units, cal, b' ').unwrap();
        let mut o = Vec::new();
        t.push(&mut o, x);
        String::from_utf8(o).unwrap()
    }

    #[test]
    fn reference_values() {
        // values and texts from ncdump 4.9.0 -t
        let m = Calendar::Mixed;
        assert_eq!(show("days since 1500-1-1", m, 185900.0), "\"2009-01-01\"");
        assert_eq!(
            show("days since 2000-06-15 12:00:00", Calendar::Day360, 3075.5),
            "\"2009-01-01\""
        );
        assert_eq!(
            show("days since 2000-06-15 12:00:00", Calendar::AllLeap, 3127.5),
            "\"2009-01-01\""
        );
        assert_eq!(
            show("days since 2000-06-15 12:00:00", Calendar::NoLeap, 3119.5),
            "\"2009-01-01\""
        );
        assert_eq!(
            show("days since 2000-06-15 12:00:00", Calendar::Julian, 3121.5),
            "\"2009-01-01\""
        );
        assert_eq!(
            show(
                "days since 1500-01-01 00:00:00",
                Calendar::ProlepticGregorian,
                185909.0
            ),
            "\"2009-01-01\""
        );
        assert_eq!(
            show("days since 1500-01-01 00:00:00", Calendar::Julian, 185913.0),
            "\"2009-01-01\""
        );
        assert_eq!(
            show("hours since 2000-01-01 00:00:00", m, 1.5),
            "\"2000-01-01 01:30\""
        );
        assert_eq!(
            show("hours since 2000-01-01 00:00:00", m, -1.0),
            "\"1999-12-31 23\""
        );
        assert_eq!(
            show("hours since 2000-01-01 00:00:00", m, 0.0001),
            "\"2000-01-01 00:00:0.360000\""
        );
        assert_eq!(
            show("seconds since 2000-01-01", m, 59.5),
            "\"2000-01-01 00:00:59.500000\""
        );
        assert_eq!(
            show("seconds since 2000-01-01", m, 1e9),
            "\"2031-09-09 01:46:40\""
        );
        assert_eq!(show("days since 1582-10-01", m, 4.0), "\"1582-10-05\"");
        assert_eq!(show("days since 1582-10-01", m, 5.0), "\"1582-10-16\"");
        assert_eq!(show("years since 2000-01-01", m, 0.5), "\"2000-07-01\"");
        assert_eq!(show("days since 1804-1-1", m, 9.5), "\"1804-01-10 12\"");
    }
}
