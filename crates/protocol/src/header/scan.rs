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
mod tests {
    use super::*;
    use crate::header::json;
    use crate::json::JsonStyle;

    /// `scan` either gives up or reads what the general reader reads.
    fn agrees(header: &str) -> bool {
        let general = json::decode_general(header.as_bytes());
        match scan(header.as_bytes()) {
            Some(cmd) => {
                assert_eq!(Some(&cmd), general.as_ref().ok(), "scanner and general reader differ on {header}");
                true
            }
            None => false,
        }
    }

    #[test]
    fn reads_the_headers_clients_send() {
        for header in [
            r#"{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":42,"serializeTypeCurrentRPC":"JSON","version":479}"#,
            r#"{"code":322,"flag":0,"language":"RUST","opaque":-7,"version":0,"remark":"r"}"#,
            r#" { "code" : 904 , "extFields" : { } , "opaque" : 2147483647 } "#,
            r#"{"code":105,"extFields":{"topic":"a","topic":"b"},"unknown":null,"other":true,"n":-12}"#,
            r#"{"language":"KLINGON","code":-2147483648}"#,
            "{}",
        ] {
            assert!(agrees(header), "should be read by the scanner: {header}");
        }
        let cmd = scan(br#"{"code":105,"extFields":{"topic":"T"},"opaque":9}"#).unwrap();
        assert_eq!((cmd.code, cmd.opaque, cmd.ext("topic")), (105, 9, Some("T")));
    }

    #[test]
    fn gives_up_on_anything_unexpected() {
        for header in [
            r#"{"code":1,"code":2}"#,
            r#"{"code":"1"}"#,
            r#"{"code":1.0}"#,
            r#"{"code":1e3}"#,
            r#"{"code":01}"#,
            r#"{"code":-0}"#,
            r#"{"code":2147483648}"#,
            r#"{"code":12345678901}"#,
            r#"{"remark":null}"#,
            r#"{"language":9}"#,
            r#"{"extFields":null}"#,
            r#"{"extFields":{"n":5}}"#,
            r#"{"extFields":{"t":"a\"b"}}"#,
            r#"{"x":[1]}"#,
            r#"{"x":{"y":1}}"#,
            r#"{"co\u0064e":1}"#,
            "{\"t\":\"a\tb\"}",
            r#"{"code":1} x"#,
            r#"{"code":1,}"#,
            r#"{"code":1"#,
            r#"["code"]"#,
            "",
        ] {
            assert!(!agrees(header), "should be left to the general reader: {header}");
        }
        assert!(scan(b"{\"t\":\"\xff\"}").is_none(), "not UTF-8");
    }

    /// 20,000 headers of up to `most - 1` of `pieces` each, drawn by a xorshift from `seed`.
    fn generated_headers<'p>(pieces: &'p [&'p str], most: u64, mut seed: u64) -> impl Iterator<Item = String> + 'p {
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        (0..20_000).map(move |_| {
            let count = next() % most;
            let drawn: Vec<&str> = (0..count).map(|_| pieces[(next() % pieces.len() as u64) as usize]).collect();
            format!("{{{}}}", drawn.join(","))
        })
    }

    /// How many of `headers` `check` read and how many it left.
    fn count_agreement(headers: impl Iterator<Item = String>, check: fn(&str) -> bool) -> (usize, usize) {
        headers.fold((0, 0), |(read, left), header| if check(&header) { (read + 1, left) } else { (read, left + 1) })
    }

    #[test]
    fn agrees_with_the_general_reader_on_generated_headers() {
        let pieces = [
            "\"code\":105",
            "\"code\":-1",
            "\"opaque\":0",
            "\"flag\":3",
            "\"version\":479",
            "\"language\":\"GO\"",
            "\"remark\":\"x\"",
            "\"extFields\":{\"topic\":\"T\",\"k\":\"\"}",
            "\"extFields\":{}",
            "\"z\":\"JSON\"",
            "\"z\":false",
            "\"z\":7",
            "\"code\":1.5",
            "\"remark\":null",
            " ",
            "\"code\":007",
        ];
        let (read, left) = count_agreement(generated_headers(&pieces, 5, 0x9E37_79B9_7F4A_7C15), agrees);
        assert!(read > 1000 && left > 1000, "both paths exercised: {read} read, {left} left");
    }

    /// What `scan_route` must say of `header`: exactly the route of the command `scan` reads,
    /// when that command is a plain two-way route query.
    fn route_agrees(header: &str) -> bool {
        let route = scan_route(header.as_bytes());
        let cmd = scan(header.as_bytes());
        let expected = cmd.as_ref().and_then(|cmd| {
            let ext = cmd.ext_fields.as_ref()?;
            let known = ext.iter().all(|(k, _)| k == "topic" || k == "acceptStandardJsonOnly");
            let plain = cmd.code == 105 && !cmd.is_oneway() && !cmd.is_response() && known;
            let topic = ext.get("topic").filter(|_| plain)?;
            Some(RouteHeader {
                opaque: cmd.opaque,
                topic,
                version: cmd.version,
                accept_standard_json_only: ext.get("acceptStandardJsonOnly"),
            })
        });
        assert_eq!(route, expected, "{header}");
        route.is_some()
    }

    #[test]
    fn route_queries_are_read_as_the_command_scan_reads() {
        let header = r#"{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":42,"serializeTypeCurrentRPC":"JSON","version":479}"#;
        let route = scan_route(header.as_bytes()).expect("a plain route query");
        assert_eq!((route.opaque, route.topic, route.version), (42, "TopicTest", 479));
        assert_eq!(route.body_style(), JsonStyle::Standard, "479 is past V4_9_4");
        let old =
            scan_route(br#"{"code":105,"extFields":{"topic":"T","acceptStandardJsonOnly":"TRUE"},"version":317}"#);
        assert_eq!(old.expect("plain").body_style(), JsonStyle::Standard, "asked for standard JSON in any case");
        let fastjson =
            scan_route(br#"{"code":105,"extFields":{"topic":"T","acceptStandardJsonOnly":"yes"},"version":317}"#);
        assert_eq!(fastjson.expect("plain").body_style(), JsonStyle::Fastjson);
        for header in [
            r#"{"code":105,"flag":2,"extFields":{"topic":"T"}}"#,
            r#"{"code":105,"flag":1,"extFields":{"topic":"T"}}"#,
            r#"{"code":106,"extFields":{"topic":"T"}}"#,
            r#"{"code":105,"extFields":{"topic":"T","__ZONE_MODE":"true"}}"#,
            r#"{"code":105,"extFields":{}}"#,
            r#"{"code":105}"#,
            r#"{"code":105,"extFields":{"topic":"a\"b"}}"#,
        ] {
            assert!(!route_agrees(header), "not for the lane: {header}");
        }
    }

    #[test]
    fn route_queries_of_generated_headers_are_read_as_the_command_scan_reads() {
        let pieces = [
            "\"code\":105",
            "\"code\":322",
            "\"flag\":0",
            "\"flag\":2",
            "\"opaque\":-5",
            "\"version\":399",
            "\"version\":401",
            "\"language\":\"JAVA\"",
            "\"remark\":\"r\"",
            "\"extFields\":{\"topic\":\"T\"}",
            "\"extFields\":{\"topic\":\"T\",\"topic\":\"U\"}",
            "\"extFields\":{\"topic\":\"T\",\"acceptStandardJsonOnly\":\"true\"}",
            "\"extFields\":{\"topic\":\"T\",\"k\":\"v\"}",
            "\"extFields\":{\"topic\":7}",
            "\"z\":null",
        ];
        let (read, left) = count_agreement(generated_headers(&pieces, 6, 0x2545_F491_4F6C_DD1D), route_agrees);
        assert!(read > 200 && left > 200, "both answers exercised: {read} read, {left} left");
    }

    fn java_header(topic: &str, flag: &str, language: &str, opaque: &str, version: &str) -> String {
        format!(
            r#"{{"code":105,"extFields":{{"topic":"{topic}"}},"flag":{flag},"language":"{language}","opaque":{opaque},"serializeTypeCurrentRPC":"JSON","version":{version}}}"#
        )
    }

    /// Wherever the layout matches, the walk reads the same route; the layout leaves to the walk
    /// whatever it does not match exactly.
    #[test]
    fn agrees_with_the_walk_on_variations_and_damage() {
        let topics = ["T", "BenchTopic-c0-17", "%RETRY%group", "t\\\"q", "tö", "", "a\tb"];
        let flags = ["0", "2", "1", "-0", "00", "4"];
        let languages = ["JAVA", "RUST", "", "x\\u0041"];
        let numbers = ["0", "-1", "2147483647", "2147483648", "1.5", "1e3", "007", "-2147483648"];
        let (mut matched, mut left) = (0, 0);
        let mut check = |header: &[u8]| {
            let walked = walk_route(header);
            match java_route::java_route(header) {
                Some(route) => {
                    assert_eq!(Some(route), walked, "{}", String::from_utf8_lossy(header));
                    matched += 1;
                }
                None => left += 1,
            }
        };
        for topic in topics {
            for flag in flags {
                for language in languages {
                    for opaque in numbers {
                        for version in ["479", "317", "1e2"] {
                            let header = java_header(topic, flag, language, opaque, version);
                            check(header.as_bytes());
                            for cut in [1, header.len() / 2, header.len() - 1] {
                                check(&header.as_bytes()[..cut]);
                                let mut damaged = header.clone().into_bytes();
                                damaged[cut] = b' ';
                                check(&damaged);
                                damaged[cut] = 0xff;
                                check(&damaged);
                            }
                        }
                    }
                }
            }
        }
        assert!(matched > 200 && left > 1000, "both answers exercised: {matched} matched, {left} left");
    }
}
