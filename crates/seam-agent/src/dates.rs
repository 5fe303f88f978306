//! Calendar dates a task names without a year ("thursday 22 april"), placed among the dates
//! of a file the turn reads (`2027-04-19`, `2027-04-26`, …).
//!
//! A small model cannot do calendar arithmetic: asked who has the pager on Thursday 22 April,
//! with a rota of weeks that start on Mondays written `2027-04-19`, qwen2.5-coder-1.5b
//! answered from a row of another week. Which week holds a day is arithmetic, so the agent
//! does it in code and says it beside the file: the day's full date in the year of the
//! file's dates, its weekday, and the file's dates on either side of it. The model still
//! reads the file and answers; nothing here chooses a row.
//!
//! Must never: guess a year the file does not support (a date is placed only when exactly
//! one year of the file's dates puts it within their range), or say anything about a task
//! that names no date.

use chrono::{Datelike, NaiveDate};

/// English month names and their usual short forms, by month number.
const MONTHS: &[(&str, u32)] = &[
    ("january", 1),
    ("jan", 1),
    ("february", 2),
    ("feb", 2),
    ("march", 3),
    ("mar", 3),
    ("april", 4),
    ("apr", 4),
    ("may", 5),
    ("june", 6),
    ("jun", 6),
    ("july", 7),
    ("jul", 7),
    ("august", 8),
    ("aug", 8),
    ("september", 9),
    ("sept", 9),
    ("sep", 9),
    ("october", 10),
    ("oct", 10),
    ("november", 11),
    ("nov", 11),
    ("december", 12),
    ("dec", 12),
];

/// How far past a file's last date a day still counts as within its range: a table of weeks
/// names each week by its first day.
const AFTER_LAST: i64 = 7;

/// The (month, day) pairs `task` names without a year: `22 april`, `22nd of April`,
/// `April 22`, `apr 22nd`. A date with a year beside it (`22 April 2027`) is whole already
/// and not listed.
pub fn days_named(task: &str) -> Vec<(u32, u32)> {
    let words: Vec<String> = task
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let month = |w: &str| MONTHS.iter().find(|(m, _)| *m == w).map(|&(_, n)| n);
    let day = |w: &str| {
        let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let suffix = &w[digits.len()..];
        let ok = matches!(suffix, "" | "st" | "nd" | "rd" | "th");
        digits
            .parse::<u32>()
            .ok()
            .filter(|d| ok && (1..=31).contains(d))
    };
    let year = |w: Option<&String>| w.is_some_and(|w| w.len() == 4 && w.parse::<u32>().is_ok());
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let Some(m) = month(w) else { continue };
        // `22 april`, `22nd of april`
        let before = match i.checked_sub(1).map(|j| words[j].as_str()) {
            Some("of") => i.checked_sub(2).map(|j| words[j].as_str()),
            other => other,
        };
        let found = before
            .and_then(day)
            .or_else(|| words.get(i + 1).and_then(|w| day(w)));
        let dated = year(words.get(i + 1)) || year(words.get(i + 2));
        if let Some(d) = found
            && !dated
            && !out.contains(&(m, d))
        {
            out.push((m, d));
        }
    }
    out
}

/// The ISO dates (`YYYY-MM-DD`, digits not glued to more digits) that `text` holds, each a
/// real day.
pub fn iso_dates(text: &str) -> Vec<NaiveDate> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let mut i = 0;
    while i + 10 <= b.len() {
        let shape = (0..10).all(|k| {
            if k == 4 || k == 7 {
                b[i + k] == b'-'
            } else {
                digit(i + k)
            }
        });
        let glued = (i > 0 && digit(i - 1)) || digit(i + 10);
        if shape
            && !glued
            && let Ok(d) = NaiveDate::parse_from_str(&text[i..i + 10], "%Y-%m-%d")
        {
            out.push(d);
            i += 10;
            continue;
        }
        i += 1;
    }
    out
}

/// What to say beside a file whose text is `text`, for a task whose words are `task`: each
/// day the task names without a year, placed in the one year of the file's dates whose range
/// holds it, with its weekday and the file's dates around it. `None` when the task names no
/// such day or the file cannot place one.
pub fn placed(task: &str, text: &str) -> Option<String> {
    let days = days_named(task);
    if days.is_empty() {
        return None;
    }
    let mut dates = iso_dates(text);
    dates.sort();
    dates.dedup();
    let (&first, &last) = (dates.first()?, dates.last()?);
    if dates.len() < 2 {
        return None;
    }
    let mut years: Vec<i32> = dates.iter().map(|d| d.year()).collect();
    years.dedup();
    let mut said = Vec::new();
    for (m, d) in days {
        let within: Vec<NaiveDate> = years
            .iter()
            .filter_map(|&y| NaiveDate::from_ymd_opt(y, m, d))
            .filter(|day| *day >= first && (*day - last).num_days() <= AFTER_LAST)
            .collect();
        let [day] = within[..] else { continue };
        let before = dates.iter().rev().find(|x| **x < day);
        let after = dates.iter().find(|x| **x > day);
        let around = if dates.contains(&day) {
            format!("the file gives that date, {day}")
        } else {
            match (before, after) {
                (Some(b), Some(a)) => {
                    format!("the file's dates on either side of it are {b} and {a}")
                }
                (Some(b), None) => format!("the file's last date before it is {b}"),
                (None, _) => continue,
            }
        };
        said.push(format!(
            "{} {} of the task is {} {day} (the year of this file's dates); {around}.",
            d,
            month_name(m),
            day.format("%A"),
        ));
    }
    (!said.is_empty()).then(|| said.join(" "))
}

fn month_name(m: u32) -> &'static str {
    const NAMES: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    NAMES[(m as usize).saturating_sub(1) % 12]
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROTA: &str = "| week starting (Mon) | primary |\n|---|---|\n| 2027-03-29 | Ines |\n\
                        | 2027-04-12 | Priya |\n| 2027-04-19 | Tomasz |\n| 2027-04-26 | Lars |\n\
                        | 2027-05-24 | Tomasz |\n- Week of 2027-04-19: Lars is primary.\n";

    #[test]
    fn days_are_read_in_the_ways_people_write_them() {
        assert_eq!(
            days_named("who has the pager on thursday 22 april?"),
            [(4, 22)]
        );
        assert_eq!(days_named("the 3rd of May and June 7th"), [(5, 3), (6, 7)]);
        assert_eq!(days_named("on Apr 22, and again apr 22"), [(4, 22)]);
        // a year makes the date whole; a month alone, a number alone, are no day
        assert!(days_named("on 22 April 2027").is_empty());
        assert!(days_named("my April distance, 125 km").is_empty());
        assert!(days_named("it may rain 40 days").is_empty());
        assert!(days_named("the 42nd of march").is_empty());
    }

    #[test]
    fn iso_dates_are_found_whole_and_real() {
        let found = iso_dates("a 2027-04-19, b 2027-02-30, c 12027-01-011, d 2027-05-24.");
        assert_eq!(
            found,
            [
                NaiveDate::from_ymd_opt(2027, 4, 19).unwrap(),
                NaiveDate::from_ymd_opt(2027, 5, 24).unwrap()
            ]
        );
    }

    #[test]
    fn a_day_is_placed_among_the_files_dates() {
        let said = placed("who has the pager on thursday 22 april?", ROTA).unwrap();
        assert_eq!(
            said,
            "22 April of the task is Thursday 2027-04-22 (the year of this file's dates); \
             the file's dates on either side of it are 2027-04-19 and 2027-04-26."
        );
        let said = placed("the secondary the week of 10 May?", ROTA).unwrap();
        assert!(
            said.contains("Monday 2027-05-10") && said.contains("2027-04-26 and 2027-05-24"),
            "{said}"
        );
        let said = placed("and on 26 April?", ROTA).unwrap();
        assert!(
            said.ends_with("the file gives that date, 2027-04-26."),
            "{said}"
        );
        // within a week after the last date: the last week's
        let said = placed("on 28 May?", ROTA).unwrap();
        assert!(
            said.ends_with("the file's last date before it is 2027-05-24."),
            "{said}"
        );
    }

    #[test]
    fn nothing_is_said_where_the_file_cannot_place_the_day() {
        // no day in the task
        assert_eq!(placed("who is on call in April?", ROTA), None);
        // outside the file's range
        assert_eq!(placed("on 22 August?", ROTA), None);
        assert_eq!(placed("on 2 March?", ROTA), None);
        // a file with fewer than two dates, or none
        assert_eq!(placed("on 22 April?", "Booked 2027-02-11."), None);
        assert_eq!(placed("on 22 April?", "no dates here"), None);
        // two years whose ranges both hold the day: no guess
        let two = "2026-01-01\n2026-12-31\n2027-01-01\n2027-12-31\n";
        assert_eq!(placed("on 22 April?", two), None);
        // a day that is no day of the year found
        assert_eq!(placed("on 29 February?", "2027-02-01\n2027-03-31"), None);
    }
}
