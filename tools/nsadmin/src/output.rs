//! How results reach the terminal: one NameServer's result as it is, several under a heading
//! each, failures on stderr naming the NameServer, and the exit code that follows.

use std::fmt::Display;
use std::io::{self, BufWriter, Write};

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::escape::printable;
use crate::fleet::{Fleet, PerNamesrv};
use crate::table::print_json;

/// What a subcommand ends with; the numbers are the process exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything asked for was done.
    Ok = 0,
    /// Something failed; it has been reported.
    Failed = 1,
    /// `diff` found NameServers that disagree.
    Drift = 2,
}

/// What every subcommand needs: the NameServers and the output choices.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The `-n` NameServers.
    pub fleet: Fleet,
    /// `--json`.
    pub json: bool,
    /// `--all`.
    pub all: bool,
}

/// Prints each NameServer's result of a read. Text: `show(result)`, under a `== addr` heading
/// when there are several. JSON: the result itself for one NameServer without `--all`, else an
/// array of `{"namesrv", "result" | "error"}`; a single NameServer's failure is printed as
/// `{"namesrv", "error"}`, so a JSON reader never meets an empty stdout. Any failure also goes to
/// stderr and makes the exit 1.
pub fn print_each<T: Serialize>(ctx: &Ctx, results: PerNamesrv<T>, show: impl Fn(&T) -> String) -> Exit {
    print_each_to(ctx, results, |value, out| out.write_all(show(value).as_bytes()))
}

/// [`print_each`] with each result's text written by `write` as it goes, so a large answer (a
/// topic list) is not copied into a string first. The text is `write`'s to escape.
pub fn print_each_to<T: Serialize>(
    ctx: &Ctx,
    results: PerNamesrv<T>,
    write: impl Fn(&T, &mut dyn Write) -> io::Result<()>,
) -> Exit {
    let failed = results.iter().any(|(_, r)| r.is_err());
    let single = !ctx.all && results.len() == 1;
    if ctx.json && !single {
        let items: Vec<Item<'_, T>> = results
            .iter()
            .map(|(addr, r)| match r {
                Ok(value) => Item { error: None, namesrv: addr, result: Some(value) },
                Err(e) => Item { error: Some(e.to_string()), namesrv: addr, result: None },
            })
            .collect();
        print_json(&items);
    }
    for (addr, result) in &results {
        match result {
            Ok(value) if ctx.json => {
                if single {
                    print_json(value);
                }
            }
            Ok(value) => {
                let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
                let heading = if single { Ok(()) } else { writeln!(out, "== {}", printable(addr)) };
                // A closed stdout (`| head`) ends the output; nothing else is to be done.
                let _ = heading.and_then(|()| write(value, &mut out)).and_then(|()| out.flush());
            }
            Err(e) => {
                if ctx.json && single {
                    print_json(&json!({"namesrv": addr, "error": e.to_string()}));
                }
                print_error(e);
            }
        }
    }
    if failed {
        Exit::Failed
    } else {
        Exit::Ok
    }
}

/// One NameServer's result in a JSON array, `{"namesrv", "result" | "error"}` (fields in the
/// order a JSON object has them): the result is written from where it is, not copied.
#[derive(Serialize)]
struct Item<'a, T> {
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    namesrv: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a T>,
}

/// Prints `error` on stderr as `nsadmin: error`, escaped ([`printable`]): its text may carry
/// what a server sent (a remark, a broker address from a cluster list).
pub fn print_error(error: &impl Display) {
    eprintln!("nsadmin: {}", printable(&error.to_string()));
}

/// Prints the result of a write on each NameServer, one line each (`addr  OK  detail`), or a
/// JSON array of `{"namesrv", "ok", ...fields}`; any failure makes the exit 1.
pub fn print_writes(ctx: &Ctx, results: PerNamesrv<Map<String, Value>>) -> Exit {
    let failed = results.iter().any(|(_, r)| r.is_err());
    if ctx.json {
        let items: Vec<Value> = results
            .iter()
            .map(|(addr, r)| {
                let mut item = Map::new();
                item.insert("namesrv".into(), addr.as_str().into());
                item.insert("ok".into(), r.is_ok().into());
                match r {
                    Ok(fields) => item.extend(fields.clone()),
                    Err(e) => {
                        item.insert("error".into(), e.to_string().into());
                    }
                }
                Value::Object(item)
            })
            .collect();
        print_json(&items);
    } else {
        for (addr, result) in &results {
            match result {
                Ok(fields) => {
                    let detail: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={}", plain(v))).collect();
                    println!("{}", printable(format!("{addr}  OK  {}", detail.join(" ")).trim_end()));
                }
                Err(e) => println!("{}", printable(&format!("{addr}  FAILED  {e}"))),
            }
        }
    }
    if failed {
        Exit::Failed
    } else {
        Exit::Ok
    }
}

/// A JSON value as text, strings without quotes.
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
