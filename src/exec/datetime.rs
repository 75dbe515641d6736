//! This module defines [`DateTime`]: `xsd:dateTime`, `xsd:date` and `xsd:time` values, their comparison on the
//! XSD timeline (with the ±14 h rule for values without a time zone) and their canonical lexical forms.

use std::cmp::Ordering;
use std::fmt;

use rust_decimal::Decimal;

use crate::store::{TermId, well_known as wk};

/// Which of the three date/time types a value is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DtKind {
    /// `xsd:dateTime`.
    DateTime,
    /// `xsd:date`.
    Date,
    /// `xsd:time`.
    Time,
}

/// A date/time value.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct DateTime {
    /// The datatype term.
    pub datatype: TermId,
    /// Which type.
    pub kind: DtKind,
    /// Year (may be negative).
    pub year: i64,
    /// 1–12.
    pub month: u8,
    /// 1–31.
    pub day: u8,
    /// 0–24.
    pub hour: u8,
    /// 0–59.
    pub minute: u8,
    /// Seconds with fraction.
    pub second: Decimal,
    /// Offset from UTC in minutes, when given.
    pub tz: Option<i16>,
}

fn digits(s: &str, n: usize) -> Option<(u32, &str)> {
    if s.len() < n || !s.as_bytes()[..n].iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

fn parse_tz(s: &str) -> Option<Option<i16>> {
    match s {
        "" => Some(None),
        "Z" => Some(Some(0)),
        _ => {
            let sign: i16 = match s.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (h, rest) = digits(&s[1..], 2)?;
            let rest = rest.strip_prefix(':')?;
            let (m, rest) = digits(rest, 2)?;
            if !rest.is_empty() || h > 14 || m > 59 || (h == 14 && m != 0) {
                return None;
            }
            Some(Some(sign * (h as i16 * 60 + m as i16)))
        }
    }
}

fn days_in_month(year: i64, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u8, d: u8) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u8, u8) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

impl DateTime {
    /// Parses a lexical form of the datatype `datatype` (`xsd:dateTime`, `xsd:date`, or `xsd:time`).
    pub fn parse(lexical: &str, datatype: TermId) -> Option<Self> {
        let kind = match datatype {
            wk::XSD_DATE_TIME => DtKind::DateTime,
            wk::XSD_DATE => DtKind::Date,
            _ => DtKind::Time,
        };
        let s = lexical.trim();
        let (year, month, day, rest) = if kind == DtKind::Time {
            (1972, 12, 31, s)
        } else {
            let (neg, body) = match s.strip_prefix('-') {
                Some(b) => (true, b),
                None => (false, s),
            };
            let ylen = body.find('-')?;
            if ylen < 4 || (ylen > 4 && body.starts_with('0')) {
                return None;
            }
            let (y, rest) = digits(body, ylen)?;
            let rest = rest.strip_prefix('-')?;
            let (m, rest) = digits(rest, 2)?;
            let rest = rest.strip_prefix('-')?;
            let (d, rest) = digits(rest, 2)?;
            let y = if neg { -i64::from(y) } else { i64::from(y) };
            if !(1..=12).contains(&m) || d < 1 || d as u8 > days_in_month(y, m as u8) {
                return None;
            }
            (y, m as u8, d as u8, rest)
        };
        let (hour, minute, second, rest) = if kind == DtKind::Date {
            (0, 0, Decimal::ZERO, rest)
        } else {
            let rest = if kind == DtKind::DateTime {
                rest.strip_prefix('T')?
            } else {
                rest
            };
            let (h, rest) = digits(rest, 2)?;
            let rest = rest.strip_prefix(':')?;
            let (mi, rest) = digits(rest, 2)?;
            let rest = rest.strip_prefix(':')?;
            let (sec_int, mut rest) = digits(rest, 2)?;
            let mut text = sec_int.to_string();
            if let Some(frac) = rest.strip_prefix('.') {
                let n = frac.bytes().take_while(u8::is_ascii_digit).count();
                if n == 0 {
                    return None;
                }
                text.push('.');
                text.push_str(&frac[..n]);
                rest = &frac[n..];
            }
            let sec: Decimal = text.parse().ok()?;
            if h > 24 || mi > 59 || sec_int > 59 || (h == 24 && (mi != 0 || !sec.is_zero())) {
                return None;
            }
            (h as u8, mi as u8, sec, rest)
        };
        let tz = parse_tz(rest)?;
        Some(Self {
            datatype,
            kind,
            year,
            month,
            day,
            hour,
            minute,
            second,
            tz,
        })
    }

    /// Seconds since the epoch on the timeline, with the given offset standing in for a missing one.
    fn timeline(&self, default_tz: i16) -> Decimal {
        let days = days_from_civil(self.year, self.month, self.day);
        let minutes = days * 1440 + i64::from(self.hour) * 60 + i64::from(self.minute)
            - i64::from(self.tz.unwrap_or(default_tz));
        Decimal::from(minutes) * Decimal::from(60) + self.second
    }

    /// Order on the XSD timeline; `None` when the values are of different types or the order depends on a
    /// missing time zone (XSD's ±14 hours rule).
    pub fn compare(&self, other: &DateTime) -> Option<Ordering> {
        if self.kind != other.kind {
            return None;
        }
        match (self.tz, other.tz) {
            (Some(_), Some(_)) | (None, None) => Some(self.timeline(0).cmp(&other.timeline(0))),
            (Some(_), None) => {
                let a = self.timeline(0);
                if a < other.timeline(14 * 60) {
                    Some(Ordering::Less)
                } else if a > other.timeline(-14 * 60) {
                    Some(Ordering::Greater)
                } else {
                    None
                }
            }
            (None, Some(_)) => other.compare(self).map(Ordering::reverse),
        }
    }

    /// `TIMEZONE()`: the offset as an `xsd:dayTimeDuration` lexical form.
    pub fn timezone_duration(&self) -> Option<String> {
        let tz = self.tz?;
        if tz == 0 {
            return Some("PT0S".to_owned());
        }
        let sign = if tz < 0 { "-" } else { "" };
        let (h, m) = (tz.abs() / 60, tz.abs() % 60);
        let mut s = format!("{sign}PT");
        if h > 0 {
            s.push_str(&format!("{h}H"));
        }
        if m > 0 {
            s.push_str(&format!("{m}M"));
        }
        Some(s)
    }

    /// `TZ()`: the offset as written in a lexical form (`Z`, `-05:00`, or empty).
    pub fn tz_text(&self) -> String {
        match self.tz {
            None => String::new(),
            Some(0) => "Z".to_owned(),
            Some(tz) => format!(
                "{}{:02}:{:02}",
                if tz < 0 { '-' } else { '+' },
                tz.abs() / 60,
                tz.abs() % 60
            ),
        }
    }

    /// The current time, UTC.
    pub fn now() -> Self {
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Self::from_unix(since.as_secs() as i64, since.subsec_millis())
    }

    /// A UTC `xsd:dateTime` from seconds and milliseconds since the epoch.
    pub fn from_unix(secs: i64, millis: u32) -> Self {
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        Self {
            datatype: wk::XSD_DATE_TIME,
            kind: DtKind::DateTime,
            year,
            month,
            day,
            hour: (rem / 3600) as u8,
            minute: (rem % 3600 / 60) as u8,
            second: Decimal::from(rem % 60) + Decimal::new(i64::from(millis), 3),
            tz: Some(0),
        }
    }
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind != DtKind::Time {
            if self.year < 0 {
                write!(f, "-{:04}", -self.year)?;
            } else {
                write!(f, "{:04}", self.year)?;
            }
            write!(f, "-{:02}-{:02}", self.month, self.day)?;
        }
        if self.kind == DtKind::DateTime {
            f.write_str("T")?;
        }
        if self.kind != DtKind::Date {
            let sec = self.second.normalize();
            let whole = sec.trunc();
            write!(f, "{:02}:{:02}:{:02}", self.hour, self.minute, whole)?;
            let frac = (sec - whole).normalize().to_string();
            if let Some(digits) = frac.strip_prefix("0.") {
                write!(f, ".{digits}")?;
            }
        }
        f.write_str(&self.tz_text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(s: &str) -> DateTime {
        DateTime::parse(s, wk::XSD_DATE_TIME).unwrap()
    }

    #[test]
    fn parses_and_prints_canonically() {
        assert_eq!(
            dt("2011-01-10T14:45:13.815-05:00").to_string(),
            "2011-01-10T14:45:13.815-05:00"
        );
        assert_eq!(
            dt("2011-01-10T14:45:13.000Z").to_string(),
            "2011-01-10T14:45:13Z"
        );
        assert!(DateTime::parse("2011-02-30T00:00:00", wk::XSD_DATE_TIME).is_none());
        assert_eq!(
            DateTime::parse("2011-02-28", wk::XSD_DATE)
                .unwrap()
                .to_string(),
            "2011-02-28"
        );
    }

    #[test]
    fn compares_on_the_timeline_and_refuses_indeterminate_orders() {
        assert_eq!(
            dt("2002-04-02T12:00:00-01:00").compare(&dt("2002-04-02T17:00:00+04:00")),
            Some(Ordering::Equal)
        );
        assert_eq!(
            dt("2002-04-02T12:00:00Z").compare(&dt("2002-04-02T12:00:00")),
            None
        );
        assert_eq!(
            dt("2002-04-02T12:00:00Z").compare(&dt("2002-04-03T12:00:00")),
            Some(Ordering::Less)
        );
    }

    #[test]
    fn epoch_conversion_round_trips() {
        let d = DateTime::from_unix(1_700_000_000, 250);
        assert_eq!(d.to_string(), "2023-11-14T22:13:20.25Z");
        assert_eq!(d.timezone_duration().as_deref(), Some("PT0S"));
    }
}
