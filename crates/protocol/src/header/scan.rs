//! A scanner for the JSON headers clients send with every request: one flat object of the known
//! keys with plain values (`{"code":105,"extFields":{"topic":"T"},"flag":0,...}`). It reads them
//! in one pass, allocating only the strings the command keeps, where serde's derived reader costs
//! about an eighth of a route query (generic field matching, a `Value` per extFields entry).
//!
//! It is written by hand because no JSON crate reads into this shape without those costs, and it
//! never decides anything on its own: whatever it does not expect (escapes, control characters,
//! nesting, a known key twice, numbers that are not plain `i32`s, `null` where a string goes)
//! makes it give up, and the caller reads the header with the general reader. So the two cannot
//! disagree on what a header means, only on how fast it is read.

use crate::code::{LanguageCode, RequestCode};
use crate::command::{ExtFields, RemotingCommand, SerializeType, FLAG_ONEWAY, FLAG_RESPONSE};
use crate::header::java_route::{self, RouteHeader};
use crate::json::cursor::Cursor;

/// The command in `header` when it is a plain header, `None` when the general reader must decide.
pub(crate) fn scan(header: &[u8]) -> Option<RemotingCommand> {
    let mut sink = CommandSink(RemotingCommand {
        code: 0,
        language: None,
        version: 0,
        opaque: 0,
        flag: 0,
        remark: None,
        ext_fields: None,
        body: None,
        serialize_type: SerializeType::Json,
    });
    walk(header, &mut sink)?;
    Some(sink.0)
}

/// The header when it is a plain JSON header of a two-way GET_ROUTEINFO_BY_TOPIC request with a
/// topic and no ext field but `topic` and `acceptStandardJsonOnly`; `None` otherwise (the
/// request then goes the general way). Reads what [`scan`] reads, keeping only this.
pub(crate) fn scan_route(header: &[u8]) -> Option<RouteHeader<'_>> {
    java_route::java_route(header).or_else(|| walk_route(header))
}

/// [`scan_route`] by walking the header key by key, whatever its layout.
pub(crate) fn walk_route(header: &[u8]) -> Option<RouteHeader<'_>> {
    let mut sink = RouteSink::default();
    walk(header, &mut sink)?;
    let plain = sink.code == RequestCode::GetRouteinfoByTopic as i32 && sink.flag & (FLAG_ONEWAY | FLAG_RESPONSE) == 0;
    (plain && sink.others == 0).then_some(())?;
    let topic = sink.topic?;
    Some(RouteHeader {
        opaque: sink.opaque,
        topic,
        version: sink.version,
        accept_standard_json_only: sink.accept_standard_json_only,
    })
}

/// The fields of a plain header as [`walk`] reads them, values borrowed from the header.
trait Sink<'h> {
    fn code(&mut self, code: i32);
    fn version(&mut self, version: i32);
    fn opaque(&mut self, opaque: i32);
    fn flag(&mut self, flag: i32);
    fn language(&mut self, name: &'h str);
    fn remark(&mut self, remark: &'h str);
    /// `extFields` is present (its entries follow; it may hold none).
    fn ext_fields(&mut self);
    /// One `extFields` entry, later ones replacing earlier ones of the same key.
    fn ext(&mut self, key: &'h str, value: &'h str);
}

/// Reads a plain header into `sink`; `None` (and `sink` half filled) when the general reader
/// must decide.
fn walk<'h>(header: &'h [u8], sink: &mut impl Sink<'h>) -> Option<()> {
    let mut cursor = Cursor::new(header)?;
    let mut seen = 0u8;
    if !cursor.open_object()? {
        loop {
            let bit = match cursor.key()? {
                b"code" => field(sink, Sink::code, cursor.int()?, 0),
                b"version" => field(sink, Sink::version, cursor.int()?, 1),
                b"opaque" => field(sink, Sink::opaque, cursor.int()?, 2),
                b"flag" => field(sink, Sink::flag, cursor.int()?, 3),
                b"language" => field(sink, Sink::language, cursor.string()?, 4),
                b"remark" => field(sink, Sink::remark, cursor.string()?, 5),
                b"extFields" => {
                    sink.ext_fields();
                    ext_fields(&mut cursor, sink)?;
                    1 << 6
                }
                _ => cursor.skip_scalar().map(|()| 0)?,
            };
            if seen & bit != 0 {
                return None;
            }
            seen |= bit;
            if !cursor.more(b'}')? {
                break;
            }
        }
    }
    cursor.at_end().then_some(())
}

/// Hands a known field's value to `sink`; its bit in the set of fields seen (`1 << index`).
fn field<'h, S: Sink<'h>, T>(sink: &mut S, set: impl FnOnce(&mut S, T), value: T, index: u8) -> u8 {
    set(sink, value);
    1 << index
}

/// `extFields`: an object of string values, each handed to `sink`.
fn ext_fields<'h>(cursor: &mut Cursor<'h>, sink: &mut impl Sink<'h>) -> Option<()> {
    if !cursor.open_object()? {
        loop {
            let key = cursor.string()?;
            cursor.eat(b':')?;
            sink.ext(key, cursor.string()?);
            if !cursor.more(b'}')? {
                break;
            }
        }
    }
    Some(())
}

/// Builds the command.
struct CommandSink(RemotingCommand);

impl<'h> Sink<'h> for CommandSink {
    fn code(&mut self, code: i32) {
        self.0.code = code;
    }
    fn version(&mut self, version: i32) {
        self.0.version = version;
    }
    fn opaque(&mut self, opaque: i32) {
        self.0.opaque = opaque;
    }
    fn flag(&mut self, flag: i32) {
        self.0.flag = flag;
    }
    fn language(&mut self, name: &'h str) {
        self.0.language = LanguageCode::from_name(name);
    }
    fn remark(&mut self, remark: &'h str) {
        self.0.remark = Some(remark.to_owned());
    }
    fn ext_fields(&mut self) {
        self.0.ext_fields = Some(ExtFields::new());
    }
    fn ext(&mut self, key: &'h str, value: &'h str) {
        self.0.ext_fields.get_or_insert_with(ExtFields::new).insert(key, value);
    }
}

/// Keeps what a route query needs; counts the ext fields it does not know.
#[derive(Default)]
struct RouteSink<'h> {
    code: i32,
    flag: i32,
    opaque: i32,
    version: i32,
    topic: Option<&'h str>,
    accept_standard_json_only: Option<&'h str>,
    others: usize,
}

impl<'h> Sink<'h> for RouteSink<'h> {
    fn code(&mut self, code: i32) {
        self.code = code;
    }
    fn version(&mut self, version: i32) {
        self.version = version;
    }
    fn opaque(&mut self, opaque: i32) {
        self.opaque = opaque;
    }
    fn flag(&mut self, flag: i32) {
        self.flag = flag;
    }
    fn language(&mut self, _: &'h str) {}
    fn remark(&mut self, _: &'h str) {}
    fn ext_fields(&mut self) {}
    fn ext(&mut self, key: &'h str, value: &'h str) {
        match key {
            "topic" => self.topic = Some(value),
            "acceptStandardJsonOnly" => self.accept_standard_json_only = Some(value),
            _ => self.others += 1,
        }
    }
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
