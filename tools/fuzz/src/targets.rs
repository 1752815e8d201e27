//! The fuzz targets. Each takes the fuzzer's bytes and returns normally whatever the decoder
//! answers; it panics only on a defect: a panic inside the decoder, or a broken invariant that a
//! peer could observe (a decoded command our own encoder cannot write back, a table that cannot
//! be read, text our properties writer produces that its reader cannot read).

use std::borrow::Cow;
use std::io::Write;
use std::sync::OnceLock;

use bytes::BytesMut;
use flate2::write::{DeflateEncoder, ZlibEncoder};
use flate2::Compression;
use namesrv::protocol::body::register::decode_register_body;
use namesrv::protocol::body::register_json;
use namesrv::protocol::body::{decode_data_version, decode_register_topic_body, BodyLimits, DecodeContext};
use namesrv::protocol::codec::{encode_frame, DEFAULT_MAX_FRAME_BYTES};
use namesrv::protocol::header::{binary, json};
use namesrv::protocol::testing::{scan_header, scan_register_body, scan_route};
use namesrv::protocol::{RemotingCodec, RemotingCommand};
use namesrv::settings::{properties, Settings, UpdateScope};
use tokio_util::codec::Decoder;

/// Frame limit of the frame target: small, so a fuzzed length prefix cannot make it allocate.
pub const MAX_FRAME_BYTES: usize = 64 * 1024;

/// Inflation limit of the register-body target (the server's is configurable, 16 MiB by default).
pub const MAX_INFLATED_BYTES: usize = 1024 * 1024;

/// Request versions the register-body target picks from with the low 3 bits of its mode byte:
/// around V3_0_11 (37, where the body stops being a bare wrapper), 4.9.x brokers (398, 401), and
/// around V5_0_0 (413, where the compressed form gains the mapping section).
pub const REGISTER_VERSIONS: [i32; 8] = [0, 36, 37, 398, 401, 412, 413, 479];

/// One fuzz target: a name (also its corpus folder), the function, and what it covers.
pub struct Target {
    /// Name on the command line and folder under `corpus/`.
    pub name: &'static str,
    /// Runs one input; panics only on a defect.
    pub run: fn(&[u8]),
    /// One line for `--list` and the reports.
    pub about: &'static str,
}

/// Every target, in the order the scripts run them.
pub const TARGETS: &[Target] = &[
    Target { name: "frame", run: frame, about: "RemotingCodec::decode over a byte stream, whole and in two pieces" },
    Target {
        name: "json_header",
        run: json_header,
        about: "header::json::decode (serialize type 0), the scanner and the route lane's reader checked against the general reader",
    },
    Target { name: "binary_header", run: binary_header, about: "header::binary::decode (ROCKETMQ, serialize type 1)" },
    Target {
        name: "register_body",
        run: register_body,
        about: "decode_register_body: mode byte (version, compressed flag, deflate in harness) + body; the scanner checked against serde",
    },
    Target {
        name: "json_bodies",
        run: json_bodies,
        about: "REGISTER_TOPIC_IN_NAMESRV (217) and DataVersion (322) bodies",
    },
    Target { name: "properties", run: properties_text, about: "properties::parse, and write -> parse round trip" },
    Target {
        name: "update_config",
        run: update_config,
        about: "UPDATE_NAMESRV_CONFIG body: UTF-8 -> properties::parse -> Settings::with_updates",
    },
];

/// The target called `name`.
pub fn find(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// What decoding a byte stream produced: the complete frames, then the error that ended it.
#[derive(Debug, PartialEq)]
struct Decoded {
    frames: Vec<RemotingCommand>,
    error: Option<String>,
}

fn decode_pieces(pieces: &[&[u8]]) -> Decoded {
    let mut codec = RemotingCodec::new(MAX_FRAME_BYTES);
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    for piece in pieces {
        buf.extend_from_slice(piece);
        loop {
            match codec.decode(&mut buf) {
                Ok(Some(cmd)) => frames.push(cmd),
                Ok(None) => break,
                Err(e) => return Decoded { frames, error: Some(e.to_string()) },
            }
        }
    }
    Decoded { frames, error: None }
}

/// A stream read as the connection reads it; the same bytes arriving in two reads (cut where the
/// input's own bytes say) must decode to the same frames and the same error.
fn frame(data: &[u8]) {
    let whole = decode_pieces(&[data]);
    let cut = data.first().map_or(0, |b| usize::from(*b) * data.len() / 256);
    let split = decode_pieces(&[&data[..cut], &data[cut..]]);
    assert_eq!(whole, split, "the stream decoded differently when cut at {cut}");
    whole.frames.iter().for_each(assert_reencodes);
}

fn json_header(data: &[u8]) {
    if let Some(scanned) = scan_header(data) {
        let general = json::decode_general(data).ok();
        assert_eq!(Some(&scanned), general.as_ref(), "the header scanner read what the general reader does not");
    }
    if let Ok(cmd) = json::decode(data) {
        assert_reencodes(&cmd);
    }
    if let Some(route) = scan_route(data) {
        let general = json::decode_general(data).expect("the route lane read a header the general reader refuses");
        let read = (general.code, general.is_oneway() || general.is_response(), general.opaque, general.version);
        assert_eq!(read, (105, false, route.opaque, route.version), "the route lane read another request");
        let ext = |key| general.ext(key);
        assert_eq!((ext("topic"), ext("acceptStandardJsonOnly")), (Some(route.topic), route.accept_standard_json_only));
    }
}

fn binary_header(data: &[u8]) {
    if let Ok(cmd) = binary::decode(data) {
        assert_reencodes(&cmd);
    }
}

/// A decoded command must encode (responses echo what peers sent: `opaque`, remarks built from
/// topic names) and read back; after that first normalisation, another round trip changes nothing.
fn assert_reencodes(cmd: &RemotingCommand) {
    let once = reencode(cmd);
    assert_eq!(reencode(&once), once, "a re-encoded command changed on a second round trip");
}

fn reencode(cmd: &RemotingCommand) -> RemotingCommand {
    let mut out = BytesMut::new();
    encode_frame(cmd, &mut out).expect("a decoded command encodes");
    let back = RemotingCodec::new(DEFAULT_MAX_FRAME_BYTES).decode(&mut out);
    let back = back.expect("an encoded frame decodes").expect("an encoded frame is complete");
    assert!(out.is_empty(), "an encoded frame decoded with {} bytes left over", out.len());
    back
}

/// Mode byte, then the body. Mode bits 0-2 pick the request version, bit 3 is the header's
/// `compressed` flag, bits 4-5 say whether the harness zlib-deflates (1) or raw-deflates (2) the
/// rest first, so mutations reach the inflated layout (Java's `RegisterBrokerBody.encode(true)`)
/// instead of dying at a checksum.
fn register_body(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let version = REGISTER_VERSIONS[usize::from(mode & 7)];
    let compressed = mode & 8 != 0;
    let body: Cow<[u8]> = match (mode >> 4) & 3 {
        1 => Cow::Owned(zlib(rest)),
        2 => Cow::Owned(raw_deflate(rest)),
        _ => Cow::Borrowed(rest),
    };
    let context =
        DecodeContext::unpaced(BodyLimits { max_inflated_bytes: MAX_INFLATED_BYTES, ..BodyLimits::default() });
    if let Some(scanned) = scan_register_body(&body, version, &context) {
        let general = register_json::decode_general(&body, version, &context).ok();
        assert_eq!(Some(&scanned), general.as_ref(), "the register body scanner read what serde does not");
    }
    if let Ok(decoded) = decode_register_body(Some(&body), compressed, version, &context) {
        // What the registry does with a body: read every topic and fingerprint the names.
        assert_eq!(decoded.topics.iter().count(), decoded.topics.len());
        std::hint::black_box(decoded.topics_fingerprint());
    }
}

/// `data` as a zlib stream (what Java's `DeflaterOutputStream` writes).
pub fn zlib(data: &[u8]) -> Vec<u8> {
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(data).expect("deflating into memory");
    encoder.finish().expect("deflating into memory")
}

/// `data` as raw deflate without the zlib wrapper (what rocketmq-rust brokers write).
pub fn raw_deflate(data: &[u8]) -> Vec<u8> {
    let mut encoder = DeflateEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(data).expect("deflating into memory");
    encoder.finish().expect("deflating into memory")
}

/// Selector byte (even: REGISTER_TOPIC_IN_NAMESRV's TopicRouteData, odd: a DataVersion), then the body.
fn json_bodies(data: &[u8]) {
    let Some((&which, body)) = data.split_first() else {
        return;
    };
    if which & 1 == 0 {
        if let Ok(queues) = decode_register_topic_body(body) {
            std::hint::black_box(queues.len());
        }
    } else {
        std::hint::black_box(decode_data_version(body).ok());
    }
}

/// Properties text as `Properties.load` reads it; what `write` makes of the pairs (the
/// GET_NAMESRV_CONFIG body and the persisted config file) must read back as the same pairs.
fn properties_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(pairs) = properties::parse(&text) {
        let written = properties::write(&pairs);
        let back = properties::parse(&written).expect("written properties parse");
        let mut expected = pairs;
        expected.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(back, expected, "written properties read back differently: {written:?}");
    }
}

/// The UPDATE_NAMESRV_CONFIG and UPDATE_CONTROLLER_CONFIG paths of the services: body as
/// UTF-8, properties, then the update applied to default settings in each scope; accepted
/// settings must still validate and render.
fn update_config(data: &[u8]) {
    static BASE: OnceLock<Settings> = OnceLock::new();
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(changes) = properties::parse(text) else {
        return;
    };
    for scope in [UpdateScope::Namesrv, UpdateScope::Controller] {
        if let Ok(update) = BASE.get_or_init(Settings::default).with_updates(scope, &changes) {
            update.settings.validate().expect("accepted settings validate");
            std::hint::black_box(properties::write(&update.settings.java_view()));
        }
    }
}
