//! A path through a story in a link: the schedule (`schedule=0,1,0`, the choices where several
//! events were due) and the injected faults (`inject=7.pause_worker.A.9,12.restart_store.db`:
//! after how many steps, the fault's name as scenario files spell it, then its fields), so a
//! reader's own run of a built-in story reopens without carrying the whole scenario.

use std::fmt::Write as _;

use fencelab_core::{
    format::model::Fault, format::model::Injection, format::model::PauseReason, names::Named,
};

use super::{bad, LinkError, Param};

/// The schedule as a link writes it.
pub fn schedule_text(schedule: &[usize]) -> String {
    let mut out = String::new();
    for (i, choice) in schedule.iter().enumerate() {
        let _ = write!(out, "{}{choice}", if i == 0 { "" } else { "," });
    }
    out
}

/// Reads a link's schedule.
pub fn parse_schedule(value: &str) -> Result<Vec<usize>, LinkError> {
    let mut schedule = Vec::new();
    for s in value.split(',').filter(|s| !s.is_empty()) {
        let choice = s
            .parse()
            .map_err(|_| bad(Param::Schedule.name(), format!("\"{s}\" is not a choice number")))?;
        schedule.push(choice);
    }
    Ok(schedule)
}

/// A name with the characters that separate a link's fields percent-encoded.
fn name(text: &str) -> String {
    super::escape(text, ".,:")
}

/// The injected faults as a link writes them.
pub fn injected_text(injected: &[Injection]) -> String {
    let mut out = String::new();
    for (i, injection) in injected.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(out, "{sep}{}.{}", injection.after, injection.fault.name());
        let _ = match &injection.fault {
            Fault::PauseWorker { worker, ticks, reason } => {
                let _ = write!(out, ".{}.{ticks}", name(worker));
                match reason {
                    PauseReason::GcPause => Ok(()),
                    other => write!(out, ".{}", other.name()),
                }
            }
            Fault::DelayMessages { worker, ticks, count } => {
                write!(out, ".{}.{ticks}.{count}", name(worker))
            }
            Fault::RestartAuthority => Ok(()),
            Fault::RestartStore { store } => write!(out, ".{}", name(store)),
            Fault::SkewClock { worker, by } => write!(out, ".{}.{by}", name(worker)),
            Fault::LoseMessage { message } => write!(out, ".{message}"),
        };
    }
    out
}

/// Reads a link's injected faults. The engine judges them when the run is played (a worker or
/// store the story lacks, a fault of zero ticks).
pub fn parse_injected(value: &str) -> Result<Vec<Injection>, LinkError> {
    let mut injected = Vec::new();
    for text in value.split(',').filter(|s| !s.is_empty()) {
        injected.push(parse_injection(text)?);
    }
    Ok(injected)
}

fn parse_injection(text: &str) -> Result<Injection, LinkError> {
    let fail = || {
        bad(
            Param::Inject.name(),
            format!(
                "\"{text}\" is not a fault (e.g. 7.pause_worker.A.9, 7.delay_messages.A.9.1, \
                 7.restart_authority, 7.restart_store.db, 7.skew_clock.A.-3 or 7.lose_message.2)"
            ),
        )
    };
    let fields: Vec<String> = text.split('.').map(super::unescape).collect();
    let number = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).ok_or_else(fail);
    let field = |i: usize| fields.get(i).cloned().ok_or_else(fail);
    let after = fields[0].parse().map_err(|_| fail())?;
    let kind = fields.get(1).map(String::as_str).unwrap_or_default();
    // How many fields each kind has (a pause's reason is optional).
    let (fault, lengths): (Fault, &[usize]) = match kind {
        "pause_worker" => {
            let reason = match fields.get(4) {
                Some(r) => PauseReason::from_name(r).ok_or_else(fail)?,
                None => PauseReason::default(),
            };
            (Fault::PauseWorker { worker: field(2)?, ticks: number(3)?, reason }, &[4, 5])
        }
        "delay_messages" => {
            let count = u32::try_from(number(4)?).map_err(|_| fail())?;
            (Fault::DelayMessages { worker: field(2)?, ticks: number(3)?, count }, &[5])
        }
        "restart_authority" => (Fault::RestartAuthority, &[2]),
        "restart_store" => (Fault::RestartStore { store: field(2)? }, &[3]),
        "skew_clock" => {
            let by = fields.get(3).and_then(|f| f.parse::<i64>().ok()).ok_or_else(fail)?;
            (Fault::SkewClock { worker: field(2)?, by }, &[4])
        }
        "lose_message" => (Fault::LoseMessage { message: number(2)? }, &[3]),
        _ => return Err(fail()),
    };
    if !lengths.contains(&fields.len()) {
        return Err(fail());
    }
    Ok(Injection { after, fault })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_written_and_read_back() {
        let injected = vec![
            Injection {
                after: 3,
                fault: Fault::PauseWorker {
                    worker: "A.b,c".into(),
                    ticks: 9,
                    reason: PauseReason::default(),
                },
            },
            Injection {
                after: 4,
                fault: Fault::PauseWorker {
                    worker: "B".into(),
                    ticks: 2,
                    reason: PauseReason::NetworkStall,
                },
            },
            Injection {
                after: 5,
                fault: Fault::DelayMessages { worker: "C".into(), ticks: 7, count: 2 },
            },
            Injection { after: 6, fault: Fault::RestartAuthority },
            Injection { after: 6, fault: Fault::RestartStore { store: "db".into() } },
            Injection { after: 7, fault: Fault::SkewClock { worker: "A".into(), by: -3 } },
            Injection { after: 8, fault: Fault::LoseMessage { message: 2 } },
        ];
        let text = injected_text(&injected);
        assert_eq!(
            text,
            "3.pause_worker.A%2Eb%2Cc.9,4.pause_worker.B.2.network_stall,5.delay_messages.C.7.2,\
             6.restart_authority,6.restart_store.db,7.skew_clock.A.-3,8.lose_message.2"
        );
        assert_eq!(parse_injected(&text), Ok(injected));
        assert_eq!(schedule_text(&[0, 2, 1]), "0,2,1");
        assert_eq!(parse_schedule("0,2,1"), Ok(vec![0, 2, 1]));
        assert_eq!(parse_schedule(""), Ok(vec![]));
    }

    #[test]
    fn a_bad_path_names_its_parameter() {
        for bad_fault in [
            "x.restart_authority",
            "3.restart_authority.extra",
            "3.pause_worker.A",
            "3.pause_worker.A.9.sleepy",
            "3.delay_messages.A.9",
            "3.restart_store",
            "3.skew_clock.A",
            "3.skew_clock.A.x",
            "3.lose_message",
            "3.unplug_cable.A",
        ] {
            let error = parse_injected(bad_fault).expect_err(bad_fault);
            assert_eq!(error.param, "inject", "{bad_fault}");
        }
        assert_eq!(parse_schedule("0,x").map_err(|e| e.param), Err("schedule".to_string()));
    }
}
