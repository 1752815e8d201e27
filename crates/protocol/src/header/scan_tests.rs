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
    let old = scan_route(br#"{"code":105,"extFields":{"topic":"T","acceptStandardJsonOnly":"TRUE"},"version":317}"#);
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
