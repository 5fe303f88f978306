//! The days a text names, and the lines of a file that speak of a day a task
//! asks about: for the answer check that sends an answer back when it draws
//! on none of them (`answer-off-the-day`, see `turn::answer`).
//!
//! Why: a schedule, a rota, a log or an itinerary is dated line by line, and
//! the line about the day asked for is one among many like it. Asked who had
//! the pager on Thursday 22 April, with a rota of weeks (`| 2027-04-19 | … |`)
//! and a swap below it (`Week of 2027-04-19: … Lars is primary that week`),
//! qwen2.5-coder-1.5b answered with a name from another week, every run.
//! Nothing in the rota says 22 April: the day falls in the week that starts
//! on the 19th, a step of date arithmetic the small model does not take.
//!
//! Only reading, never deciding: this module finds days and lines; whether
//! an answer is sent back is the check's.
//!
//! The forms read (what people write in tasks and notes): ISO dates
//! (`2027-04-19`), a day and a month's name (`22 April`, `22 apr 2027`,
//! `Thu 22 April`), and a month's name and a day (`April 22`, `May 10th`).
//! A month's name alone is no day ("in May"), and "may" counts as a month only
//! next to a day's number. Dates are parsed by hand because they sit in free
//! text; the calendar arithmetic is chrono's.

use chrono::{Datelike, NaiveDate};

/// A day a text names: its month and day, and its year when the text gives
/// one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Day {
    pub year: Option<i32>,
    pub month: u32,
    pub day: u32,
}

impl std::fmt::Display for Day {
    /// As a person writes it: `22 April`, `22 April 2027`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = MONTHS[self.month as usize - 1];
        let mut cap = name.chars();
        let first = cap.next().map(|c| c.to_ascii_uppercase());
        write!(f, "{} {}{}", self.day, first.unwrap_or(' '), cap.as_str())?;
        match self.year {
            Some(y) => write!(f, " {y}"),
            None => Ok(()),
        }
    }
}

/// The year a day without one is placed in when nothing gives it a year: a
/// leap year, so 29 February is a day.
const ANY_YEAR: i32 = 2000;

/// The most days before a day that the start of its week may lie.
const WEEK: i64 = 7;

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// The month a word names: its full name or an abbreviation of three letters
/// or more (`apr`, `sept`), any case.
fn month_of(word: &str) -> Option<u32> {
    let w = word.to_lowercase();
    if w.len() < 3 {
        return None;
    }
    MONTHS
        .iter()
        .position(|m| m.starts_with(w.as_str()))
        .map(|i| i as u32 + 1)
}

/// A day of the month written as a number, with an ordinal's ending or
/// without (`22`, `22nd`, `1st`).
fn day_number(word: &str) -> Option<u32> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let ending = &word[digits.len()..].to_lowercase();
    if !matches!(ending.as_str(), "" | "st" | "nd" | "rd" | "th") || digits.len() > 2 {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

/// A four-digit year.
fn year_number(word: &str) -> Option<i32> {
    (word.len() == 4 && word.bytes().all(|b| b.is_ascii_digit()))
        .then(|| word.parse().ok())
        .flatten()
}

/// The days `text` names, in order (see the module doc for the forms).
pub fn days_in(text: &str) -> Vec<Day> {
    let mut out = Vec::new();
    // ISO dates first: `-` joins their parts, and splits every other word.
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
        if word.len() == 10
            && let Ok(d) = NaiveDate::parse_from_str(word, "%Y-%m-%d")
        {
            out.push(Day {
                year: Some(d.year()),
                month: d.month(),
                day: d.day(),
            });
        }
    }
    let spans = word_spans(text);
    let words: Vec<&str> = spans.iter().map(|&(a, b)| &text[a..b]).collect();
    // A number that a `:` or `.` joins to another (`10:30`, `1.5`) is no day.
    let day_at = |i: usize| {
        let (a, b) = spans[i];
        let joined = |c: Option<char>| {
            matches!(c, Some(':' | '.' | ','))
                && text[b..].chars().nth(1).is_some_and(|d| d.is_ascii_digit())
        };
        let before = text[..a].chars().next_back();
        let after_digit = matches!(before, Some(':' | '.'))
            && text[..a]
                .chars()
                .rev()
                .nth(1)
                .is_some_and(|d| d.is_ascii_digit());
        if joined(text[b..].chars().next()) || after_digit {
            None
        } else {
            day_number(words[i])
        }
    };
    let mut i = 0;
    while i + 1 < words.len() {
        let (day, month, day_first) = match (day_at(i), month_of(words[i + 1])) {
            (Some(d), Some(m)) => (d, m, true),
            _ => match (month_of(words[i]), day_at(i + 1)) {
                (Some(m), Some(d)) => (d, m, false),
                _ => {
                    i += 1;
                    continue;
                }
            },
        };
        let year = words.get(i + 2).and_then(|w| year_number(w));
        let mut days = vec![day];
        if day_first {
            // The days listed or spanned before it, in the same month:
            // `21, 22, 23 May`, `24 and 25 May`, `21–27 May`.
            let mut j = i;
            let mut later = day;
            loop {
                let (k, range) = match j.checked_sub(2).map(|k| words[k + 1].to_lowercase()) {
                    Some(w) if w == "and" || w == "to" => (j - 2, w == "to"),
                    _ if j >= 1 => {
                        let gap = text[spans[j - 1].1..spans[j].0].trim();
                        match gap {
                            "," | "&" => (j - 1, false),
                            "-" | "–" | "—" => (j - 1, true),
                            _ => break,
                        }
                    }
                    _ => break,
                };
                let Some(d) = day_at(k).filter(|&d| d < later) else {
                    break;
                };
                if range {
                    days.extend(d..later);
                } else {
                    days.push(d);
                }
                (j, later) = (k, d);
            }
        }
        for day in days {
            if NaiveDate::from_ymd_opt(year.unwrap_or(ANY_YEAR), month, day).is_some() {
                out.push(Day { year, month, day });
            }
        }
        i += if year.is_some() { 3 } else { 2 };
    }
    out
}

/// The byte spans of `text`'s words: its runs of letters and digits.
fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(a)) => {
                out.push((a, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(a) = start {
        out.push((a, text.len()));
    }
    out
}

/// The date `day` is in the year `year` gives when it has none.
fn date_of(day: Day, year: i32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(day.year.unwrap_or(year), day.month, day.day)
}

/// The year a day without one means in `text`: the year of the text's dated
/// days in the same month, else the text's most common year, else
/// [`ANY_YEAR`] (with the text's own days placed there as well).
fn year_in(text_days: &[Day], month: u32) -> i32 {
    let years: Vec<i32> = text_days.iter().filter_map(|d| d.year).collect();
    if let Some(y) = text_days
        .iter()
        .find(|d| d.month == month && d.year.is_some())
        .and_then(|d| d.year)
    {
        return y;
    }
    let mut best = None;
    let mut count = 0;
    for &y in &years {
        let n = years.iter().filter(|&&z| z == y).count();
        if n > count {
            (best, count) = (Some(y), n);
        }
    }
    best.unwrap_or(ANY_YEAR)
}

/// The lines of a text about a day (see [`lines_of_day`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayLines {
    /// The lines, by their index among the text's lines, in order.
    pub at: Vec<usize>,
    /// When no line names the day itself: the first day of the week it
    /// falls in, which the lines name.
    pub week_of: Option<NaiveDate>,
}

/// The lines of `text` that speak of `asked`, at most `max`: the lines that
/// name that day; or, when none does, the lines that name the start of the
/// week it falls in, where the text is dated week by week (it names a day
/// less than a week before `asked`, and the day a week after that one, so
/// `asked` lies between two of its weeks' starts). `None` when no line
/// speaks of it.
pub fn lines_of_day(text: &str, asked: Day, max: usize) -> Option<DayLines> {
    let dated: Vec<(usize, Vec<Day>)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i, days_in(l)))
        .filter(|(_, d)| !d.is_empty())
        .collect();
    let all: Vec<Day> = dated.iter().flat_map(|(_, d)| d.iter().copied()).collect();
    let year = year_in(&all, asked.month);
    let target = date_of(asked, year)?;
    let dates: Vec<NaiveDate> = all.iter().filter_map(|&d| date_of(d, year)).collect();
    let on = |want: NaiveDate| -> Vec<usize> {
        dated
            .iter()
            .filter(|(_, days)| days.iter().any(|&d| date_of(d, year) == Some(want)))
            .map(|&(i, _)| i)
            .take(max)
            .collect()
    };
    if dates.contains(&target) {
        return Some(DayLines {
            at: on(target),
            week_of: None,
        });
    }
    let start = dates
        .iter()
        .filter(|&&d| d < target && (target - d).num_days() < WEEK)
        .max()
        .copied()?;
    dates
        .contains(&(start + chrono::Duration::days(WEEK)))
        .then(|| DayLines {
            at: on(start),
            week_of: Some(start),
        })
}

/// True when `word` is one a day is written with (a month's or a weekday's
/// name or its abbreviation, in any case, or "week" or "day"), so that an
/// answer that only says the day again is known as saying nothing of it.
pub fn is_day_word(word: &str) -> bool {
    const WEEKDAYS: [&str; 7] = [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ];
    let w = word.to_lowercase();
    month_of(&w).is_some()
        || (w.len() >= 3 && WEEKDAYS.iter().any(|d| d.starts_with(w.as_str())))
        || matches!(w.as_str(), "week" | "weeks" | "day" | "days")
}

/// The month a word names by its full name, as a month is written in a
/// sentence: "may" only as `May`, with its capital (lower-case, it is the
/// verb far more often), and not as the text's first word ("May I …").
fn month_named(word: &str, first: bool) -> Option<u32> {
    let w = word.to_lowercase();
    let at = MONTHS.iter().position(|m| *m == w)?;
    let verb = w == "may" && (first || !word.starts_with('M'));
    (!verb).then_some(at as u32 + 1)
}

/// The months `text` names by name alone, in no day (see [`days_in`]): "my
/// May distance target", "in April". In order, once each.
pub fn months_alone_in(text: &str) -> Vec<u32> {
    let in_days: Vec<u32> = days_in(text).iter().map(|d| d.month).collect();
    let mut out = Vec::new();
    for (i, (a, b)) in word_spans(text).into_iter().enumerate() {
        if let Some(m) = month_named(&text[a..b], i == 0)
            && !in_days.contains(&m)
            && !out.contains(&m)
        {
            out.push(m);
        }
    }
    out
}

/// The month a word of a table or a list names by the short form a person
/// writes there: three letters with a capital (`Jan`, `Sep`), or `Sept`.
/// Asked who hosted a book club in January, from a rota whose rows began
/// `| Jan 2028 |`, qwen2.5-coder-1.5b named February's host
/// (agent-tasks-fresh, a suite it was not tuned on).
fn month_abbreviated(word: &str) -> Option<u32> {
    let mut chars = word.chars();
    let capital = chars.next().is_some_and(|c| c.is_ascii_uppercase());
    if !capital || !chars.all(|c| c.is_ascii_lowercase()) {
        return None;
    }
    let w = word.to_lowercase();
    if w.len() != 3 && w != "sept" {
        return None;
    }
    MONTHS
        .iter()
        .position(|m| m.starts_with(w.as_str()))
        .map(|i| i as u32 + 1)
}

/// The lines of `text` (their indices) that name `month` by its name or its
/// short form (see [`month_abbreviated`]), at most `max`: the row of a month
/// in a table of months (`| May | 135 km |`, `| Jan 2028 | … |`).
pub fn lines_naming_month(text: &str, month: u32, max: usize) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            word_spans(line).into_iter().any(|(a, b)| {
                let word = &line[a..b];
                month_named(word, false) == Some(month) || month_abbreviated(word) == Some(month)
            })
        })
        .map(|(i, _)| i)
        .take(max)
        .collect()
}

/// A month's name as a person writes it: `May`.
pub fn month_name(month: u32) -> String {
    let name = MONTHS[month as usize - 1];
    let mut chars = name.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(year: Option<i32>, month: u32, d: u32) -> Day {
        Day {
            year,
            month,
            day: d,
        }
    }

    #[test]
    fn a_month_named_alone_is_read_and_may_only_as_a_name() {
        assert_eq!(
            months_alone_in("Did I hit my May distance target? Tell me by how many km."),
            [5]
        );
        assert_eq!(
            months_alone_in("How far did I run in april and in May?"),
            [4, 5]
        );
        // A month in a day is the day's; "may" as a verb is no month.
        assert!(months_alone_in("who has the pager on thursday 22 april?").is_empty());
        assert!(months_alone_in("May I see what you may find?").is_empty());
        let note = "| month | target |\n|---|---|\n| April | 125 km |\n| May | 135 km |\n\
                    The taper starts on Mon 31 May.\nYou may rest.";
        assert_eq!(lines_naming_month(note, 5, 4), [3, 4]);
        assert_eq!(lines_naming_month(note, 5, 1), [3]);
        assert_eq!(lines_naming_month(note, 6, 4), Vec::<usize>::new());
        assert_eq!(month_name(5), "May");
    }

    #[test]
    fn the_forms_a_day_is_written_in_are_read() {
        assert_eq!(
            days_in("who has the pager on thursday 22 april?"),
            [day(None, 4, 22)]
        );
        assert_eq!(
            days_in("April 22nd, or 1 Sept 2027"),
            [day(None, 4, 22), day(Some(2027), 9, 1)]
        );
        assert_eq!(
            days_in("| 2027-04-19 | Tomasz Wrona | Priya Raman |"),
            [day(Some(2027), 4, 19)]
        );
        assert_eq!(
            days_in("- Out: TP 1331, Fri 21 May, LHR 17:25"),
            [day(None, 5, 21)]
        );
        // Days listed or spanned before one month.
        let may = |d| day(None, 5, d);
        assert_eq!(
            days_in("| 21, 22, 23 May | Casa |"),
            [may(23), may(22), may(21)]
        );
        assert_eq!(days_in("24 and 25 May"), [may(25), may(24)]);
        assert_eq!(
            days_in("Porto, 21–24 May 2027"),
            [
                day(Some(2027), 5, 24),
                day(Some(2027), 5, 21),
                day(Some(2027), 5, 22),
                day(Some(2027), 5, 23)
            ]
        );
        // A number before them that cannot be a day stays out; one that can
        // is taken as listed.
        assert_eq!(days_in("TP 1331, 21 May"), [may(21)]);
        assert_eq!(days_in("flight 12 and 25 May"), [may(25), may(12)]);
        // A month alone, "may" the verb, a time, a day that is none.
        assert_eq!(days_in("Did I hit my May target? You may 10:30"), []);
        assert_eq!(days_in("31 April, 2027-02-30, 45 May"), []);
    }

    const ROTA: &str = "| week starting (Mon) | primary | secondary |\n\
        |---|---|---|\n\
        | 2027-04-12 | Priya Raman | Kwame Asante |\n\
        | 2027-04-19 | Tomasz Wrona | Priya Raman |\n\
        | 2027-04-26 | Lars Eklund | Kwame Asante |\n\
        | 2027-05-10 | Kwame Asante | Priya Raman |\n\
        \n\
        ## Swaps\n\
        - Week of 2027-04-19: Tomasz is at a conference. Lars is primary that week.\n";

    #[test]
    fn a_day_inside_a_week_of_a_weekly_text_gets_that_weeks_lines() {
        let lines: Vec<&str> = ROTA.lines().collect();
        let found = lines_of_day(ROTA, day(None, 4, 22), 4).expect("the week's lines");
        assert_eq!(
            found.at.iter().map(|&i| lines[i]).collect::<Vec<_>>(),
            [
                "| 2027-04-19 | Tomasz Wrona | Priya Raman |",
                "- Week of 2027-04-19: Tomasz is at a conference. Lars is primary that week."
            ]
        );
        assert_eq!(found.week_of, NaiveDate::from_ymd_opt(2027, 4, 19));
        // A day the text names is its own line.
        let found = lines_of_day(ROTA, day(None, 5, 10), 4).expect("the day's line");
        assert_eq!(found.at, [5]);
        assert_eq!(lines[5], "| 2027-05-10 | Kwame Asante | Priya Raman |");
        assert_eq!(found.week_of, None);
        // After the last week: no week a week later, so nothing.
        assert_eq!(lines_of_day(ROTA, day(None, 5, 12), 4), None);
        // In another year than the text's, nothing.
        assert_eq!(lines_of_day(ROTA, day(Some(2026), 4, 22), 4), None);
        let found = lines_of_day(ROTA, day(None, 4, 22), 1).expect("the week's lines");
        assert_eq!(found.at.len(), 1);
    }

    #[test]
    fn a_text_dated_day_by_day_gives_only_the_days_it_names() {
        let trip = "## Nights\n- 24 May: Porto, Rua das Flores\n- 25 May: Quinta do Vale, Pinhão\n\
                    - 27 May: home\n";
        let found = lines_of_day(trip, day(None, 5, 25), 4).expect("the day's line");
        assert_eq!(found.at, [2]);
        // 26 May is named nowhere, and the text is not weekly.
        assert_eq!(lines_of_day(trip, day(None, 5, 26), 4), None);
    }

    #[test]
    fn a_day_is_written_as_a_person_writes_it() {
        assert_eq!(day(None, 4, 22).to_string(), "22 April");
        assert_eq!(day(Some(2027), 5, 1).to_string(), "1 May 2027");
    }

    #[test]
    fn day_words_are_known() {
        for w in ["Thursday", "thu", "April", "apr", "week", "May"] {
            assert!(is_day_word(w), "{w}");
        }
        for w in ["Lars", "pager", "ma", "primary"] {
            assert!(!is_day_word(w), "{w}");
        }
    }
}
