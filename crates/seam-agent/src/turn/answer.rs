//! The checks a final answer passes before the turn ends on it, in order.
//!
//! Each check is a mistake a small model was seen to make at the end of a
//! task (its evidence is written beside it): an answer that gives seam's own
//! words back, lists the parts of a sum, speaks of the prompt's example, and
//! so on. The first check that finds its mistake sends the answer back, and
//! is counted as the correction it is named for. Most send an answer back
//! once a turn; the second time, the answer stands. One list, one loop: a
//! check added here is ordered, counted and limited like the others, and no
//! arm of the turn's loop repeats that.
//!
//! A check must never make the agent call a tool: it says what to do, and
//! the model decides. The one exception to "once": an answer the model gives
//! again word for word, with the same mistake, is first asked for again,
//! sampled (`copy-resampled`, a few times a turn); past that, when the
//! mistake is certain, it is sent back once more, and the reply after it may
//! not answer (`reply-repeated`); which tool it calls is still the model's
//! choice. What each check does with a copy is its [`OnCopy`].

use serde_json::{Value, json};

use super::{
    BUILDER, Progress, READER, Turn, asks_for_a_branch, code_files_named_in, how_to_change,
    seams_words,
};
use crate::model::ChatMessage;

/// What a check does with an answer it sends back.
pub(super) enum SendBack {
    /// The model is shown this, and replies again.
    Say(String),
    /// As `Say`, and the replies of the turn that were sent back whole and
    /// state a figure nothing showed leave the conversation, this one too
    /// (`made-up-reply-unsaid`): the model is told what it made up, and is
    /// not shown its words to copy. The turn ends what it is told with the
    /// file the task names that the turn has not read (`task-file-unread`,
    /// see `Turn::unread`), else with the task again: asked for a shoe's
    /// mileage from notes and a CSV, qwen2.5-coder-1.5b made up "1000 km"
    /// before it read the CSV, was told only to call "the tool that has
    /// it", and spent three of its twelve steps on searches before a repeat
    /// sent it to the CSV.
    SayUnsaying(String),
    /// As `Say`, and this reply leaves the conversation, counted as
    /// `unsaid`: a small model shown its own wrong answer copies it, whatever
    /// it is told after it. What the model is told names what it gave back.
    /// `echo-reply-unsaid`: it gave back seam's own words, which say nothing
    /// of the model's. `off-task-reply-unsaid`: its figure came from a line
    /// about something else; told so, and shown the lines about the task,
    /// qwen2.5-coder-1.5b gave its "20:00" again word for word, greedy and
    /// sampled, with its answer above the words that told it.
    /// `left-out-reply-unsaid`: it left out a source the task names.
    SayDropping { said: String, unsaid: &'static str },
    /// The turn asks for its final answer, for this reason.
    Force(String),
    /// The turn ends with no answer, for this reason.
    Stop(&'static str),
    /// The answer is a copy, with its mistake, of one sent back before: it
    /// is dropped and the same request asked again, sampled
    /// (`copy-resampled`, see [`Progress::resample_copy`]).
    Resample,
}

/// The answer being checked and what it is checked against.
struct Answer<'a> {
    text: &'a str,
    messages: &'a [ChatMessage],
    /// This check sent an answer of the turn back before.
    again: bool,
    /// For a check that sends back `anew`, on an answer that is no copy:
    /// what it found each time it sent an answer back before (its details).
    /// Empty otherwise.
    found: Vec<&'a Value>,
}

/// The most times a turn a check that sends back `anew` sends answers back.
/// Told that its "1000 km" was made up, qwen2.5-coder-1.5b read the runs and
/// its notes, worked out 189.28 km, and answered with that and "177.31 km"
/// more to go, a figure it made up in the place of one it had not worked
/// out; a check that sends back once let it stand.
const MAX_FOUND_ANEW: usize = 2;

type Run = fn(&Turn<'_>, &Progress, &Answer<'_>) -> Option<(Value, SendBack)>;

/// One check of an answer.
struct Check {
    /// The correction it is counted as.
    name: &'static str,
    /// Also checked once the turn has told the model to answer.
    when_forced: bool,
    /// Sends an answer back at most once a turn.
    once: bool,
    /// With `once`: which answers the check judges again, after it has sent
    /// one back, up to [`MAX_FOUND_ANEW`] sends a turn in all.
    anew: Anew,
    /// What becomes of an answer given again word for word, with the
    /// mistake this check sent it back for.
    on_copy: OnCopy,
    run: Run,
}

/// Which answers a check that sends back `once` judges again (see
/// [`Check::anew`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Anew {
    /// None: once is once.
    Never,
    /// An answer in new words (no copy of one sent back before); a copy goes
    /// the way of [`OnCopy`].
    InNewWords,
    /// Any answer, a copy too, for what the check did not find before: it
    /// is handed what it found ([`Answer::found`]) and judges the rest. A
    /// copy of an answer sent back for another reason may hold another
    /// mistake: told to read the runs the task named, qwen2.5-coder-1.5b read
    /// them and gave its answer again word for word, the runs in no program.
    ForNewFindings,
    /// Any answer once for each stage of the work the turn has reached (the
    /// check's finding is the stage); the stages are few, so
    /// [`MAX_FOUND_ANEW`] does not bound them. A copy of an answer sent
    /// back is no new answer: it is what the check's `OnCopy` says.
    PerStage,
}

/// What a check does with a copy of an answer it sent back, the mistake
/// still in it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OnCopy {
    /// The copy stands: the mistake was likely, not certain, and the model
    /// has said it twice.
    Stands,
    /// The copy is asked for again, sampled (`copy-resampled`, a few times a
    /// turn); a copy past that stands. For a likely mistake the model was
    /// shown the way out of: told that its 20:00 came from a dinner booking
    /// and shown the lines about flights, qwen2.5-coder-1.5b under
    /// llama-server gave 20:00 again word for word, greedy.
    Resampled,
    /// The mistake is certain: the copy is asked for again, sampled, and
    /// past that sent back once more, and the reply after it must call a
    /// tool (`reply-repeated`).
    SentBack,
}

/// The name of the answer check that finds a source left out, and whose
/// finding names the program line to change, which a copy of that program
/// is told of (`program-unchanged-told`).
pub(super) const LEAVES_OUT_SOURCE: &str = "answer-leaves-out-source";

/// The checks, in the order they are made.
const CHECKS: &[Check] = &[
    Check {
        name: "answer-echoes-agent",
        when_forced: true,
        once: false,
        anew: Anew::Never,
        on_copy: OnCopy::SentBack,
        run: echoes_agent,
    },
    Check {
        name: "answer-only-refusal",
        when_forced: true,
        once: true,
        anew: Anew::Never,
        on_copy: OnCopy::SentBack,
        run: only_refusal,
    },
    Check {
        name: "time-not-given",
        when_forced: true,
        once: true,
        anew: Anew::Never,
        on_copy: OnCopy::Stands,
        run: time_not_given,
    },
    Check {
        name: "answer-off-the-day",
        when_forced: true,
        once: true,
        anew: Anew::Never,
        on_copy: OnCopy::Resampled,
        run: off_the_day,
    },
    Check {
        name: "answer-off-the-month",
        when_forced: true,
        once: true,
        anew: Anew::Never,
        on_copy: OnCopy::Resampled,
        run: off_the_month,
    },
    Check {
        name: "answer-names-what-is-gone",
        when_forced: true,
        once: true,
        anew: Anew::Never,
        on_copy: OnCopy::Resampled,
        run: names_what_is_gone,
    },
    Check {
        name: "question-left-out",
        when_forced: true,
        once: true,
        anew: Anew::Never,
        on_copy: OnCopy::Resampled,
        run: question_left_out,
    },
    Check {
        name: "total-not-added",
        when_forced: false,
        once: true,
        anew: Anew::Never,
        on_copy: OnCopy::SentBack,
        run: total_not_added,
    },
    Check {
        name: "answer-echoes-example",
        when_forced: false,
        once: true,
        anew: Anew::Never,
        on_copy: OnCopy::SentBack,
        run: echoes_example,
    },
    Check {
        name: "pointed-tool-not-called",
        when_forced: false,
        once: true,
        anew: Anew::Never,
        on_copy: OnCopy::SentBack,
        run: pointed_tool_not_called,
    },
    Check {
        name: "answer-about-own-failure",
        when_forced: false,
        once: true,
        anew: Anew::Never,
        on_copy: OnCopy::SentBack,
        run: about_own_failure,
    },
    Check {
        name: LEAVES_OUT_SOURCE,
        when_forced: false,
        once: true,
        anew: Anew::ForNewFindings,
        on_copy: OnCopy::Stands,
        run: leaves_out_source,
    },
    Check {
        name: "answer-figure-unseen",
        when_forced: false,
        once: true,
        anew: Anew::InNewWords,
        on_copy: OnCopy::SentBack,
        run: figure_unseen,
    },
    Check {
        name: "answer-file-unseen",
        when_forced: false,
        once: true,
        anew: Anew::Never,
        on_copy: OnCopy::Stands,
        run: file_unseen,
    },
    Check {
        name: "answer-figure-off-task",
        when_forced: false,
        once: true,
        anew: Anew::Never,
        on_copy: OnCopy::Resampled,
        run: figure_off_task,
    },
    Check {
        name: "quantity-not-worked-out",
        when_forced: false,
        once: true,
        anew: Anew::Never,
        on_copy: OnCopy::Stands,
        run: quantity_not_worked_out,
    },
    Check {
        name: super::CHANGE_NOT_MADE,
        when_forced: false,
        once: true,
        anew: Anew::PerStage,
        // Told at a file read to change it now, qwen2.5-coder-1.5b under
        // llama-server gave the same answer about the file word for word,
        // greedy, and it stood: the task's branch was never made.
        on_copy: OnCopy::Resampled,
        run: change_not_made,
    },
];

impl Turn<'_> {
    /// The first check (of [`CHECKS`], in order) that sends `text` back, counted
    /// as its correction; `None` when the answer passes them all.
    pub(super) fn check_answer(
        &mut self,
        p: &mut Progress,
        text: &str,
        messages: &[ChatMessage],
        on: &mut (dyn FnMut(super::TurnEvent<'_>) + Send),
    ) -> Option<SendBack> {
        for c in CHECKS {
            let again = p.sent_back_for.contains(c.name);
            let found = p.found_by(c.name);
            // A check that sends back anew looks again (see `Anew`).
            let anew = again
                && match c.anew {
                    Anew::Never => false,
                    Anew::InNewWords => found.len() < MAX_FOUND_ANEW && !p.copied,
                    Anew::ForNewFindings => found.len() < MAX_FOUND_ANEW,
                    Anew::PerStage => !p.copied,
                };
            // A check that has had its once is made again only on a copy of
            // an answer sent back before (`reply-repeated`).
            let repeat = c.once && again && !anew;
            let copy_again = p.copied
                && match c.on_copy {
                    OnCopy::Stands => false,
                    OnCopy::Resampled => true,
                    OnCopy::SentBack => p.repeats_sent_back < MAX_REPEATS_SENT_BACK,
                };
            if (p.forced && !c.when_forced) || (repeat && !copy_again) {
                continue;
            }
            let answer = Answer {
                text,
                messages,
                again,
                found: if anew { found } else { Vec::new() },
            };
            if let Some((detail, send)) = (c.run)(self, p, &answer) {
                // A copy of the answer this check sent back, or an answer
                // that would end the turn with none, is asked for again,
                // sampled, first: told to answer, qwen2.5-coder-0.5b gave
                // back seam's line that sent it to a file, greedy.
                let stops = matches!(send, SendBack::Stop(_));
                if (repeat || stops) && p.resample_copy(self.options.copy_resamples) {
                    if stops {
                        p.correct(c.name, detail, self.trace, on);
                    }
                    let of = if stops { "the agent's words" } else { "answer" };
                    p.correct(
                        "copy-resampled",
                        json!({"of": of, "check": c.name}),
                        self.trace,
                        on,
                    );
                    return Some(SendBack::Resample);
                }
                if repeat {
                    // Past its resamples a forced answer's copy stands: the
                    // turn has no more calls to ask for.
                    if c.on_copy == OnCopy::Resampled || p.forced {
                        continue;
                    }
                    p.repeats_sent_back += 1;
                    let call = detail
                        .get("call")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    p.correct("reply-repeated", json!({"check": c.name}), self.trace, on);
                    p.call_next = true;
                    return Some(SendBack::Say(repeated(p, call.as_deref())));
                }
                p.record_sent_back(c.name, detail, self.trace, on);
                return Some(send);
            }
        }
        None
    }
}

/// An answer that says nothing seam did not say first. Told to give its
/// final answer, qwen2.5-coder-0.5b gave back the line that told it so, or
/// the task: passed off as the model's answer, it would tell the operator
/// what seam said, as if found. Refused a linked key and shown a trip note,
/// it answered with the line that followed the refusal, and when told to
/// answer, with it again: the note it had read was five messages back. So
/// once, the note comes again, last; then the turn asks for its answer, and
/// an echo of a forced answer ends the turn, once it was asked for again,
/// sampled, where the turn can (`copy-resampled`).
///
/// A tool's result given back under the line seam showed it under
/// ([`crate::observe::gives_back_a_result`]) is sent back the same way, but
/// never stops the turn: it may hold the answer (a program's output), so
/// once the turn has told the model to answer, it stands.
fn echoes_agent(t: &Turn<'_>, p: &Progress, a: &Answer<'_>) -> Option<(Value, SendBack)> {
    let echo = crate::observe::says_nothing_new(a.text, seams_words(a.messages), &p.shown);
    let result = !echo && crate::observe::gives_back_a_result(a.text);
    if !echo && !result {
        return None;
    }
    if p.forced {
        return echo.then_some((
            Value::Null,
            SendBack::Stop("the model gave back seam's own words, not an answer"),
        ));
    }
    let shown = p
        .file_texts
        .iter()
        .rev()
        .find(|(path, _)| p.whole.contains(path.as_str()));
    Some(match shown {
        Some((path, text)) if !a.again => (
            json!({"shown_again": path, "result_given_back": result}),
            SendBack::SayDropping {
                said: format!(
                    "Your answer gave back a note of mine, not an answer. {}Answer the \
                     operator's task from it, in your own words. The task was: {}",
                    here_again(t, path, text),
                    p.report.info.task.trim()
                ),
                unsaid: "echo-reply-unsaid",
            },
        ),
        _ => (
            Value::Null,
            SendBack::Force("the answer gave back the agent's own words".to_owned()),
        ),
    })
}

/// A file shown again, for an answer (or code) that must come from it: a
/// small model answers from what it read last.
pub(super) fn here_again(t: &Turn<'_>, path: &str, text: &str) -> String {
    format!("Here is {path} again:\n\n{}\n\n", t.cut(text))
}

/// An answer to one part of the task that leaves out a question it asks
/// (see [`crate::observe::unanswered_question`]; qwen2.5-coder-0.5b, told to
/// answer, gave a made-up password and no name for who was on call) is sent
/// back once with the question and, last, the file read whole that speaks of
/// it. Made once the turn has told the model to answer too. The same answer
/// given again word for word is asked for again, sampled: qwen2.5-coder-0.5b
/// gave its runbook quote with no SKU twice, greedy.
fn question_left_out(t: &Turn<'_>, p: &Progress, a: &Answer<'_>) -> Option<(Value, SendBack)> {
    let task = p.report.info.task.trim();
    let question = crate::observe::unanswered_question(task, a.text)?;
    let file = p.file_texts.iter().rev().find(|(path, text)| {
        p.whole.contains(path.as_str()) && crate::observe::speaks_of(text, question)
    });
    let said = match file {
        Some((path, text)) => format!(
            "{}Answer every part of the task, this question too, from it.",
            here_again(t, path, text)
        ),
        // Told to answer, the model may call nothing more.
        None if p.forced => {
            "Answer every part of the task, this question too, from what you read.".to_owned()
        }
        // Nothing read speaks of it: the file it needs may be unread.
        None => "Answer every part of the task, this question too: read what it needs first if \
                 you have not."
            .to_owned(),
    };
    Some((
        json!({"question": question, "shown_again": file.map(|(path, _)| path)}),
        SendBack::Say(format!(
            "Your answer leaves out a question of the task: \"{question}\" {said} The task was: \
             {task}"
        )),
    ))
}

/// Asked for a protected file and a fact from a note, qwen2.5-coder-1.5b read
/// the note, then answered with the refusal alone, in the words of its
/// earlier reply.
fn only_refusal(_: &Turn<'_>, p: &Progress, a: &Answer<'_>) -> Option<(Value, SendBack)> {
    let only = p.refused_for_good
        && crate::observe::answers_only_the_refusal(a.text, &p.report.info.task, &p.file_texts);
    only.then(|| {
        (
            Value::Null,
            with_task(
                p,
                "Your answer only says what was refused. Answer every other part of the task \
                 from what you read, and say in one line what was refused.",
            ),
        )
    })
}

/// Asked what time a flight home left, with the trip note read,
/// qwen2.5-coder-0.5b answered "The flight home from Porto is on 21 May
/// 2027." and smollm2-135m gave the day the trip was booked: no time at
/// all, where two lines under the note's `## Flights` held four. A task
/// that asks what time (see [`crate::observe::asks_what_time`]) answered
/// with no time of day is sent back once with the lines of the files read
/// that hold one and speak of what the task asks (see
/// [`crate::observe::time_lines`]); with none, the answer stands (the files
/// may not say). Made once the turn has told the model to answer too: the
/// small models that make this mistake are the ones told to. An answer whose
/// every time is one nothing showed (see [`crate::observe::unseen_times`])
/// gives no time either: told to answer, qwen2.5-coder-0.5b gave the flight
/// home as "13:36", its number `TP 1336`.
fn time_not_given(_: &Turn<'_>, p: &Progress, a: &Answer<'_>) -> Option<(Value, SendBack)> {
    let task = &p.report.info.task;
    if !crate::observe::asks_what_time(task) {
        return None;
    }
    // A time it gives that was shown makes it an answer (judged elsewhere).
    if crate::observe::gives_a_seen_time(a.text, task, &p.shown) {
        return None;
    }
    let made_up = crate::observe::unseen_times(a.text, task, &p.shown);
    let lines = crate::observe::time_lines(task, &p.file_texts, TIME_LINES_SHOWN);
    if lines.is_empty() {
        return None;
    }
    let mut said = if made_up.is_empty() {
        String::from("The task asks what time, and your answer gives no time.")
    } else {
        format!(
            "The task asks what time, and your answer gives {}, which nothing you were shown \
             holds.",
            made_up.join(", ")
        )
    };
    // A number read as a time is said to be one: told only that its 13:31
    // was shown nowhere, with the lines about the flights, the 0.5B gave
    // 13:31 again, from `TP 1331`.
    for (written, number) in crate::observe::times_read_from_numbers(a.text, task, &p.shown) {
        said.push_str(&format!(
            " {written} is no time of day: it is the number in \"{number}\" read as one."
        ));
    }
    said.push_str(" These lines of what you read give a time and speak of what the task asks:");
    push_lines(&mut said, &lines);
    said.push_str("\nAnswer with the time from the line about what the task asks.");
    Some((json!({"lines": lines.len()}), with_task(p, &said)))
}

/// A task that asks about one day (see [`crate::days`]: "on thursday 22
/// april", "the week of 10 May"), with files read that are dated line by
/// line, answered with nothing from the lines about that day: sent back once
/// with those lines (the lines that name the day, or, in a text dated week by
/// week, the lines that name the start of the week it falls in; see
/// [`crate::days::lines_of_day`]). The answer draws on them when it shares a
/// word with them beyond the task's own words and the words days are written
/// with ([`crate::observe::draws_on_lines`]). Asked who had the pager on
/// Thursday 22 April, with a rota by weeks and its swaps read whole,
/// qwen2.5-coder-1.5b named someone of another week, in every run; the
/// lines about that week were the table's row for 2027-04-19 and the swap
/// that names the same week. Made once the turn has told the model to
/// answer too, as `time-not-given` is; with no such lines, the answer stands.
fn off_the_day(_: &Turn<'_>, p: &Progress, a: &Answer<'_>) -> Option<(Value, SendBack)> {
    let task = &p.report.info.task;
    let [asked] = crate::days::days_in(task)[..] else {
        return None;
    };
    let mut week_of = None;
    // (path, the line with the item it begins, what it is about)
    let mut lines: Vec<(&str, String, Option<String>)> = Vec::new();
    for (path, text) in &p.file_texts {
        let Some(found) = crate::days::lines_of_day(text, asked, DAY_LINES_SHOWN) else {
            continue;
        };
        week_of = week_of.or(found.week_of);
        let all: Vec<&str> = text.lines().collect();
        for i in found.at {
            let (line, about) = crate::observe::line_in_context(&all, i);
            lines.push((path.as_str(), line, about));
        }
    }
    let lines = lines_left_unused(p, a, lines)?;
    // The week it falls in is said, not left to the model: the step of date
    // arithmetic is what it did not take.
    let said = match week_of {
        Some(start) => format!(
            "The task asks about {asked}, which falls in the week that starts on {start} \
             ({}). Your answer uses none of the lines of what you read about that week:",
            start.format("%A %-d %B")
        ),
        None => format!(
            "The task asks about {asked}, and your answer uses none of the lines of what you \
             read that speak of that day:"
        ),
    };
    Some((
        json!({"day": asked.to_string(), "week_of": week_of.map(|d| d.to_string()), "lines": lines.len()}),
        with_task(p, &with_lines_said(said, &lines)),
    ))
}

/// A line of a file read that speaks of what the task asks: its file, the
/// line, and what it is about (a swap "overrides the table").
type LineAbout<'a> = (&'a str, String, Option<String>);

/// `lines` (see [`LineAbout`]), at most [`DAY_LINES_SHOWN`], when the answer
/// draws on none of them ([`crate::observe::draws_on_lines`]); `None` when
/// there are none, or it does. One judgement for a day asked and a month.
fn lines_left_unused<'a>(
    p: &Progress,
    a: &Answer<'_>,
    mut lines: Vec<LineAbout<'a>>,
) -> Option<Vec<LineAbout<'a>>> {
    lines.truncate(DAY_LINES_SHOWN);
    if lines.is_empty() {
        return None;
    }
    let texts: Vec<&str> = lines.iter().map(|(_, l, _)| l.as_str()).collect();
    if crate::observe::draws_on_lines(a.text, &p.report.info.task, &texts, &p.shown) {
        return None;
    }
    Some(lines)
}

/// `said`, then each of `lines` with what it is about, then the line that
/// asks for an answer from every one of them.
fn with_lines_said(mut said: String, lines: &[LineAbout<'_>]) -> String {
    for (path, line, about) in lines {
        push_line(&mut said, path, line, about.as_deref());
    }
    said.push_str(
        "\nAnswer from these lines, every one of them: a later line may change an earlier one.",
    );
    said
}

/// A task that asks about one month by its name alone ("who's hosting in
/// January?", see [`crate::days::months_alone_in`]), with files read whose
/// lines name that month (by name or short form, see
/// [`crate::days::lines_naming_month`]), answered with nothing from those
/// lines ([`crate::observe::draws_on_lines`]): sent back once with them, as
/// `answer-off-the-day` does for a day. Asked who hosted a book club in
/// January, with the rota read whole, qwen2.5-coder-1.5b named the host of
/// the row below, February's (agent-tasks-fresh, a suite it was not tuned
/// on). With no such lines, or a day asked too, the answer stands.
fn off_the_month(_: &Turn<'_>, p: &Progress, a: &Answer<'_>) -> Option<(Value, SendBack)> {
    let task = &p.report.info.task;
    let [month] = crate::days::months_alone_in(task)[..] else {
        return None;
    };
    if !crate::days::days_in(task).is_empty() {
        return None;
    }
    let mut lines: Vec<LineAbout<'_>> = Vec::new();
    for (path, text) in &p.file_texts {
        let all: Vec<&str> = text.lines().collect();
        for i in crate::days::lines_naming_month(text, month, DAY_LINES_SHOWN) {
            let (line, about) = crate::observe::line_in_context(&all, i);
            lines.push((path.as_str(), line, about));
        }
    }
    let lines = lines_left_unused(p, a, lines)?;
    let name = crate::days::month_name(month);
    let said = format!(
        "The task asks about {name}, and your answer uses none of the lines of what you read \
         that speak of {name}:"
    );
    Some((
        json!({"month": name, "lines": lines.len()}),
        with_task(p, &with_lines_said(said, &lines)),
    ))
}

/// A task about now answered with only a name the results say is gone
/// (see [`crate::observe::names_only_what_is_gone`]): sent back once with
/// the clause that says so. Made once the turn told the model to answer
/// too.
fn names_what_is_gone(_: &Turn<'_>, p: &Progress, a: &Answer<'_>) -> Option<(Value, SendBack)> {
    let (name, clause) =
        crate::observe::names_only_what_is_gone(a.text, &p.report.info.task, &p.shown)?;
    Some((
        json!({"name": name}),
        with_task(
            p,
            &format!(
                "Your answer names {name}, and what you read says it is gone: \"{}\". The task \
                 asks about now: answer with what it is now, from what you read.",
                seam_term::clip(clause, LINE_SHOWN, "…")
            ),
        ),
    ))
}

/// The line that prints a program's result, where what it works out is
/// made: its last line that starts with `print(`, trimmed and clipped as a
/// shown line is. One reading for the line `answer-leaves-out-source` tells
/// the model to change and the program `program-unchanged-told` finds
/// unchanged.
pub(super) fn printing_line(code: &str) -> Option<String> {
    code.lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with("print("))
        .map(|l| seam_term::clip(l, LINE_SHOWN, "…").into_owned())
}

/// At most this many lines are shown by `answer-off-the-day`.
const DAY_LINES_SHOWN: usize = 4;

/// At most this many lines are shown by `time-not-given`.
const TIME_LINES_SHOWN: usize = 4;

/// A task that asks for one quantity answered with the parts of it: see
/// [`crate::observe::lists_printed_numbers`].
fn total_not_added(_: &Turn<'_>, p: &Progress, a: &Answer<'_>) -> Option<(Value, SendBack)> {
    if !crate::observe::asks_for_a_quantity(&p.report.info.task) {
        return None;
    }
    let out = p.last_output.as_ref()?.get("stdout")?.as_str()?;
    let n = crate::observe::lists_printed_numbers(out, a.text)?;
    Some((
        json!({"numbers": n}),
        SendBack::Say(format!(
            "The task asks for one quantity, and your answer lists the {n} numbers your code \
             printed. Run the same code again, keeping its filter, but add the values up and \
             print only the sum; then answer with the one number it prints."
        )),
    ))
}

/// An answer about one of the prompt's example tasks: see
/// [`crate::prompt::example_echoed`].
fn echoes_example(t: &Turn<'_>, p: &Progress, a: &Answer<'_>) -> Option<(Value, SendBack)> {
    let example = crate::prompt::example_echoed(t.registry, a.text, &p.report.info.task)?;
    Some((
        json!({"example": example}),
        with_task(
            p,
            &format!(
                "Your answer speaks of the example in the instructions (\"{example}\"), which \
                 is not the operator's task. Answer the operator's task from the results above, \
                 or call a tool for what they do not tell you."
            ),
        ),
    ))
}

/// Asked what it had been told to note, qwen2.5-coder-1.5b searched the code
/// index, whose note said operator notes are searched with memory.operator,
/// and answered with a host and a window it made up.
fn pointed_tool_not_called(
    t: &Turn<'_>,
    p: &Progress,
    _: &Answer<'_>,
) -> Option<(Value, SendBack)> {
    let (last, pointed) = t.pointed_tool(p)?;
    // The call, kept in the detail for a copy of this answer (see `repeated`).
    let (detail, call) = t.pointer_told(p, &pointed);
    Some((
        detail,
        with_task(
            p,
            &format!(
                "The note in {last}'s result names {pointed} for this, and this turn has not \
                 called it: call the one that bears on the task, then answer from what it \
                 returns.{call}"
            ),
        ),
    ))
}

/// qwen2.5-coder-1.5b, its program cut short by a string it never closed,
/// answered with an account of the syntax error, twice, in two tasks.
fn about_own_failure(_: &Turn<'_>, p: &Progress, a: &Answer<'_>) -> Option<(Value, SendBack)> {
    crate::observe::answers_with_own_failure(a.text, &p.report.info.task, p.last_output.as_ref())
        .then(|| {
            (
                Value::Null,
                with_task(
                    p,
                    "Your last program failed, so the task is not done: your answer speaks of \
                     the error, not of what the operator asked. Write the code again, simpler \
                     (the standard library only), and run it; or answer from what you have read.",
                ),
            )
        })
}

/// Asked for a shoe's mileage kept in the operator's notes,
/// qwen2.5-coder-1.5b answered "1000 km" without looking, three runs
/// running; asked for a SKU, "12345". A figure nothing showed was made up
/// (see [`crate::observe::unseen_numbers`]). The made-up answers leave the
/// conversation: with its first "1000 km and 5 years" answer still in it,
/// the model gave those words again after the notes with the real figures
/// (312.6 km, 700 km) were read, and again after it read the runs.
///
/// An answer in other words (no copy) that still makes a figure up is sent
/// back again (`anew`), the same figure or another: told that its "1000 km"
/// was made up, qwen2.5-coder-1.5b ran a program of its own, never called
/// the notes' tool, and answered "1000 km" again.
fn figure_unseen(_: &Turn<'_>, p: &Progress, a: &Answer<'_>) -> Option<(Value, SendBack)> {
    let unseen = crate::observe::unseen_numbers(a.text, &p.report.info.task, &p.shown);
    if unseen.is_empty() {
        return None;
    }
    let said = format!(
        "Your answer gives {}, which nothing you were shown holds: never state a figure you did \
         not read or compute. Answer from the results above, or call the tool that has it first.",
        unseen.join(", ")
    );
    Some((json!({"figures": unseen}), SendBack::SayUnsaying(said)))
}

/// A file the answer names that nothing shown holds was made up (see
/// [`crate::observe::unseen_files`]); sent back once. Its mistake is likely,
/// not certain (an answer may name a file to create), so the same answer
/// given again stands.
fn file_unseen(_: &Turn<'_>, p: &Progress, a: &Answer<'_>) -> Option<(Value, SendBack)> {
    let unseen = crate::observe::unseen_files(a.text, &p.report.info.task, &p.shown);
    if unseen.is_empty() {
        return None;
    }
    let said = format!(
        "Your answer names {}, which no result you were shown holds: name only files a tool \
         showed you. Answer from the results above, or call the tool that finds it first.",
        unseen.join(", ")
    );
    Some((json!({"files": unseen}), with_task(p, &said)))
}

/// Asked when a flight home left, qwen2.5-coder-1.5b (under llama-server)
/// answered with a time the note it had read held only in a dinner booking
/// of another day. A figure taken from a line that names nothing the task
/// asks about is sent back once, to answer from the line that does (see
/// [`crate::observe::figure_off_task`]), with the lines that do;
/// the answer leaves the conversation (`off-task-reply-unsaid`). Its mistake
/// is likely, not certain: the same answer given again is asked for again,
/// sampled, once, and a copy past that stands.
fn figure_off_task(_: &Turn<'_>, p: &Progress, a: &Answer<'_>) -> Option<(Value, SendBack)> {
    // Results other than a file's lines (a program's output) may hold the
    // figure worked out; those are not judged.
    let read = crate::observe::result_header(READER);
    let others: Vec<&str> = p
        .shown
        .iter()
        .filter(|s| !s.starts_with(&read))
        .map(String::as_str)
        .collect();
    let off = crate::observe::figure_off_task(a.text, &p.report.info.task, &p.file_texts, &others)?;
    // The figure and its line are not quoted back: a small model copies what
    // it read last. Told "Your answer gives 20:00, which the note holds only
    // in this line: …dinner … (booked 20:00)", and shown the lines about
    // flights, qwen2.5-coder-1.5b answered "The time is 20:00."
    let mut said = format!(
        "Your answer takes its figure from a line of {} that names nothing the task asks about.",
        off.path
    );
    if off.on_task.is_empty() {
        said.push_str(" Find the line that is about what the task asks, and answer from it.");
    } else {
        said.push_str(" These lines of what you read do speak of what the task asks:");
        push_lines(&mut said, &off.on_task);
        said.push_str("\nAnswer from the line about what the task asks.");
    }
    Some((
        json!({"figure": off.figure, "path": off.path, "line": seam_term::clip(off.line, LINE_SHOWN, "…"), "lines": off.on_task.len()}),
        SendBack::SayDropping {
            said: task_again(p, &said),
            unsaid: "off-task-reply-unsaid",
        },
    ))
}

/// At most this many characters of a line quoted back to the model.
const LINE_SHOWN: usize = 200;

/// The lines a check shows the model (path, line), one to a row, each clipped.
fn push_lines(said: &mut String, lines: &[(&str, &str)]) {
    for (path, line) in lines {
        push_line(said, path, line, None);
    }
}

/// One line a check shows the model, as a row: its file, what it is about
/// when that is known (a row with its table's header, an item with the
/// heading it sits under), and the line, clipped.
pub(super) fn push_line(said: &mut String, path: &str, line: &str, about: Option<&str>) {
    let line = seam_term::clip(line, LINE_SHOWN, "…");
    said.push_str(&match about {
        Some(about) => format!("\n- {path}, under {about}: {line}"),
        None => format!("\n- {path}: {line}"),
    });
}

/// An answer with a figure that leaves out a source the task names (see
/// [`crate::observe::source_unused`]): a file the task names that the turn
/// read, or the operator's notes the turn was shown; sent back with a
/// note's lines about the task, or, for a data table, with how to work it
/// in, and the answer leaves the conversation (`left-out-reply-unsaid`).
/// Sent back anew for another source, twice a turn at most: told of the
/// notes it left out, qwen2.5-coder-1.5b worked out 700 - 312.6 and answered
/// with that, the runs the task named left out in turn. Its mistake is
/// likely, not certain (a note may only confirm), so the same answer given
/// again stands. Made before `answer-figure-unseen`: an answer that left a
/// note out made up what the note would have given ("177.31 km" more to go,
/// beside the 189.28 km it summed), and told of that figure,
/// qwen2.5-coder-1.5b ran its sum again and, told to answer, gave the
/// made-up figure back; the note's lines are what it lacked.
fn leaves_out_source(t: &Turn<'_>, p: &Progress, a: &Answer<'_>) -> Option<(Value, SendBack)> {
    let task = &p.report.info.task;
    let named = crate::observe::files_named(task);
    let flagged = |name: &str| a.found.iter().any(|d| d["source"] == name);
    let mut sources: Vec<(String, String)> = p
        .file_texts
        .iter()
        .filter(|(path, _)| named.iter().any(|f| super::same_file(f, path)))
        .map(|(path, text)| (super::plain_name(path).to_owned(), text.clone()))
        .collect();
    if !p.notes_read.is_empty() {
        sources.push((super::OPERATOR_NOTES.to_owned(), p.notes_read.join("\n")));
    }
    // A table the turn ran no program beside is `quantity-not-worked-out`'s
    // (or `answer-figure-unseen`'s): here a table is left out when programs
    // ran, none of them over it.
    sources.retain(|(name, text)| {
        !flagged(name) && (!p.code_ran.is_empty() || !crate::observe::is_data_table(name, text))
    });
    let (name, lines, given) = crate::observe::source_unused(a.text, task, &sources, &p.code_ran)?;
    let python = t.python_tool();
    let table = sources
        .iter()
        .any(|(n, text)| n == name && crate::observe::is_data_table(n, text));
    // The line of the last program to change, when the model is told to
    // change one: kept for a copy of that program (`program-unchanged-told`).
    let mut change = None;
    let said = if table {
        let work = match python {
            Some(python) => format!(" (with {python}, whose code can open {name})"),
            None => String::new(),
        };
        format!(
            "Your answer uses nothing of {name}, which the task names: no program of the turn \
             opened it, and no figure of it is in your answer. Work it into your answer{work}, \
             then answer."
        )
    } else {
        let what = if name == super::OPERATOR_NOTES {
            format!("the operator's notes ({name})")
        } else {
            name.to_owned()
        };
        let listed: String = lines
            .iter()
            .map(|l| format!("\n- {}", seam_term::clip(l, LINE_SHOWN, "…")))
            .collect();
        // The figures are named; with a program run, the way to work them
        // in is said: told only to work the lines in, qwen2.5-coder-1.5b
        // ran the same program again, twice, and answered with its sum alone.
        let figures = match given.as_slice() {
            [init @ .., last] if !init.is_empty() => format!("{} and {last}", init.join(", ")),
            _ => given.join(""),
        };
        let printing = p.code_ran.last().and_then(|code| printing_line(code));
        change = printing
            .as_ref()
            .map(|line| json!({"line": line, "figures": figures}));
        let work = match (python, printing) {
            (Some(python), Some(line)) => format!(
                "Work them into your last program: its line `{line}` prints without them. \
                 Change that line so it works {figures} in, run the program again with \
                 {python}, then answer."
            ),
            (Some(python), None) => format!(
                "Work what they give into your answer (with {python} for what must be worked \
                 out), then answer."
            ),
            (None, _) => "Work what they give into your answer, then answer.".to_owned(),
        };
        format!(
            "Your answer uses nothing of {what}, and these lines of it bear on the task:{listed}\n\
             Neither your answer nor a program of the turn used {figures}. {work}"
        )
    };
    let mut detail = json!({"source": name, "lines": lines.len()});
    if let Some(change) = change {
        detail["change"] = change;
    }
    Some((
        detail,
        SendBack::SayDropping {
            said: task_again(p, &said),
            unsaid: "left-out-reply-unsaid",
        },
    ))
}

/// Asked how many km were on a pair of shoes, from a starting figure in the
/// operator's notes and the runs in a CSV file, qwen2.5-coder-1.5b read both
/// and answered with the notes' figures alone, never running anything: a
/// task that asks for a quantity, a table of data read, no program that ran
/// to the end and printed, and an answer whose figures were all shown (or
/// none) has not worked it out. Asked by how many km a month's target was
/// missed, it ran three programs that failed and answered with the target
/// itself ("135 km under").
fn quantity_not_worked_out(
    t: &Turn<'_>,
    p: &Progress,
    a: &Answer<'_>,
) -> Option<(Value, SendBack)> {
    let python = t.python_tool()?;
    if p.printed
        || !crate::observe::asks_for_a_quantity(&p.report.info.task)
        || !crate::observe::only_figures_shown(a.text, &p.report.info.task, &p.shown)
    {
        return None;
    }
    let (path, _) = p
        .file_texts
        .iter()
        .find(|(path, text)| crate::observe::is_data_table(path, text))?;
    let ran = if p.called().contains(&python) {
        "no program of this turn ran to the end and printed, so ".to_owned()
    } else {
        String::new()
    };
    Some((
        json!({"table": path, "failed_runs": !ran.is_empty()}),
        with_task(
            p,
            &format!(
                "The task asks for a quantity, and your answer only gives figures you were \
                 shown: {ran}nothing was worked out from the rows of {path}. Work it out with \
                 {python} (its code can open {path} by that path, read-only), print the \
                 result, then answer with it."
            ),
        ),
    ))
}

/// Asked to fix a bug on a branch, qwen2.5-coder-1.5b read the README and
/// answered with a line of it.
fn change_not_made(t: &Turn<'_>, p: &Progress, a: &Answer<'_>) -> Option<(Value, SendBack)> {
    let (detail, said) = unmade_change(t, p, &a.found, false)?;
    Some((detail, SendBack::Say(said)))
}

/// The turn's next step towards the change its task asks for, while the
/// builder has changed nothing: the stage it has reached (as
/// `change-not-made`'s detail) and what the model is told; `None` past the
/// change, or when it was told of this stage this way before (`told`, the
/// details of before). One answer for both ways that say it: an answer
/// without the change, and a repeated call stopped in a change task
/// (`after_repeat`, see `Turn::repeat_stopped`). Each tells a stage once:
/// told by the answer check to list the repository's files,
/// qwen2.5-coder-1.5b repeated its plan of an `ls` in Python until it was
/// stopped.
pub(super) fn unmade_change(
    t: &Turn<'_>,
    p: &Progress,
    told: &[&Value],
    after_repeat: bool,
) -> Option<(Value, String)> {
    let unmade =
        !p.changed && t.registry.get(BUILDER).is_some() && asks_for_a_branch(&p.report.info.task);
    if !unmade {
        return None;
    }
    let stage = ChangeStage::of(p);
    // A stage, and at the change stage the file read: each file read is a
    // stage of its own, told once (told to read the file src/cli.js calls
    // into, the model is told how to change that one when it stops there).
    let mut detail = json!({"stage": stage.name()});
    if let ChangeStage::Change(path) = &stage {
        detail["path"] = json!(path);
    }
    if after_repeat {
        detail["after"] = json!("repeat");
    }
    if told.contains(&&detail) {
        return None;
    }
    let unchanged = "The task asks for a change on a branch, and nothing has been changed yet.";
    let next = match &stage {
        ChangeStage::Find => how_to_change(&p.report.info.task),
        ChangeStage::Read => {
            let which = match p.code_files.as_slice() {
                [] => String::new(),
                files => format!(" (its files of code are {})", files.join(", ")),
            };
            format!(
                "You have the repository's files: read the one whose code does what the task \
                 is about with files.read{which}, then change it with builder (op replace: \
                 path, old as the file has it, new)."
            )
        }
        ChangeStage::Change(path) => {
            let text = p.file_texts.last().map_or("", |(_, text)| text.as_str());
            let named = code_files_named_in(text, path, &p.code_files, &p.report.info.task);
            match named.first() {
                None => format!(
                    "You have read {path}. If the code the task is about is in it, change it \
                     now: {}, old word for word as the file has it. If it only calls code in \
                     another file, read that file with files.read.",
                    super::shown_change(path)
                ),
                // The call last, written out: told both calls, the change's
                // last, qwen2.5-coder-1.5b read src/cli.js again until it
                // was made to answer; the bug was in the file it calls.
                Some(first) => format!(
                    "You have read {path}. If the code the task is about is in it, change it \
                     now with builder (op replace: path {path}, old word for word as the file \
                     has it, new). If it only calls code in another file, read that file: \
                     {path} takes code from {}. The first of them is read with {}",
                    named.join(", "),
                    json!({"mode": "action", "tool": READER, "params": {"path": first}})
                ),
            }
        }
    };
    Some((detail, format!("{unchanged} {next}")))
}

/// How far a turn that was asked for a change got before it answered
/// without one: `change-not-made` sends an answer back once a stage, with
/// the next step from there. Sent back once, with how to find the code,
/// qwen2.5-coder-1.5b listed the repository's files and answered with
/// them; the once-check let that stand, and the file with the bug was never
/// read.
enum ChangeStage {
    /// Nothing of the repository looked at.
    Find,
    /// The code index answered, no file read.
    Read,
    /// A file read (the last one, as shown), nothing changed.
    Change(String),
}

impl ChangeStage {
    fn of(p: &Progress) -> ChangeStage {
        if let Some((path, _)) = p.file_texts.last() {
            return ChangeStage::Change(path.clone());
        }
        let indexed = p
            .report
            .info
            .history
            .iter()
            .any(|r| r.tool == super::CODE_INDEX && r.outcome.starts_with("ok"));
        if indexed {
            ChangeStage::Read
        } else {
            ChangeStage::Find
        }
    }

    fn name(&self) -> &'static str {
        match self {
            ChangeStage::Find => "find",
            ChangeStage::Read => "read",
            ChangeStage::Change(_) => "change",
        }
    }
}

/// Copies of an answer sent back before, with the same mistake, that are
/// sent back again (see `Progress::repeats`), a turn: a check's own mistake
/// must not cost the operator more than a step or two, and where the grammar
/// cannot take the answer form away a model could repeat itself until its
/// steps run out.
const MAX_REPEATS_SENT_BACK: u32 = 1;

/// What the model is told when it gives, word for word, an answer the turn
/// sent back before, with the mistake a check sent it back for; its next
/// reply may not answer. A check that wrote out the call to make (its
/// detail's `call`) has it said again, last: told to call "the tool that
/// reads what it lacks", with the task last, qwen2.5-coder-1.5b called again
/// the search it had made before, not the memory.operator search it had
/// been handed.
fn repeated(p: &Progress, call: Option<&str>) -> String {
    let said = "You gave this answer before, word for word, and it was sent back: it still \
                does not do the task. Call the tool that reads or computes what it lacks, \
                then answer from its result.";
    match call {
        Some(call) => format!("{} That call is: {call}", task_again(p, said)),
        None => task_again(p, said),
    }
}

/// `said`, then the operator's task again: a small model answers what it read
/// last (the same reason the forced answer repeats the task).
fn with_task(p: &Progress, said: &str) -> SendBack {
    SendBack::Say(task_again(p, said))
}

/// The words of [`with_task`].
pub(super) fn task_again(p: &Progress, said: &str) -> String {
    format!(
        "{said} The operator's task was: {}",
        p.report.info.task.trim()
    )
}
