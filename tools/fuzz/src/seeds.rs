//! Seed inputs for every target, built from the frames captured between rocketmq-rust 1.0.0
//! peers (`tests/fixtures/rocketmq-rust-broker-1.0.0`) and from the vectors of the library's unit
//! tests (Java's hex frames, the Java-written compressed body, fastjson's bare keys).

use std::fs;
use std::path::{Path, PathBuf};

use crate::targets::{raw_deflate, zlib, REGISTER_VERSIONS};

/// The captured wire samples, as committed with the server's tests.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/rocketmq-rust-broker-1.0.0")
}

/// One seed: its target, a file name saying where it comes from, and the bytes.
pub struct Seed {
    /// The target it seeds.
    pub target: &'static str,
    /// File name under `corpus/<target>/`.
    pub name: String,
    /// The input.
    pub data: Vec<u8>,
}

fn seed(target: &'static str, name: impl Into<String>, data: impl Into<Vec<u8>>) -> Seed {
    Seed { target, name: name.into(), data: data.into() }
}

/// Every seed; reads the fixtures from `dir`.
pub fn all(dir: &Path) -> std::io::Result<Vec<Seed>> {
    let mut seeds = frame_and_header_seeds(dir)?;
    seeds.extend(register_body_seeds(dir)?);
    seeds.extend(json_body_seeds(dir)?);
    seeds.extend(properties_seeds());
    Ok(seeds)
}

/// Java's GET_ROUTEINFO_BY_TOPIC frames from `RemotingCommandTest` (codec.rs tests): JSON header, binary header.
const JAVA_JSON_FRAME: &str = "00 00 00 88 00 00 00 84 7b 22 63 6f 64 65 22 3a 31 30 35 2c 22 65 78 74 46 69 65 6c \
    64 73 22 3a 7b 22 74 6f 70 69 63 22 3a 22 54 6f 70 69 63 54 65 73 74 22 7d 2c 22 66 6c 61 67 22 3a 30 2c 22 6c 61 \
    6e 67 75 61 67 65 22 3a 22 4a 41 56 41 22 2c 22 6f 70 61 71 75 65 22 3a 34 32 2c 22 73 65 72 69 61 6c 69 7a 65 54 \
    79 70 65 43 75 72 72 65 6e 74 52 50 43 22 3a 22 4a 53 4f 4e 22 2c 22 76 65 72 73 69 6f 6e 22 3a 34 37 39 7d";
const JAVA_BINARY_FRAME: &str = "00 00 00 2d 01 00 00 29 00 69 00 01 df 00 00 00 2a 00 00 00 00 00 00 00 00 00 00 00 \
    14 00 05 74 6f 70 69 63 00 00 00 09 54 6f 70 69 63 54 65 73 74";

fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(u8::is_ascii_hexdigit).collect();
    digits
        .chunks(2)
        .map(|pair| {
            let nibble = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
            nibble(pair[0]) << 4 | nibble(pair[1])
        })
        .collect()
}

/// A frame: `total_len | type << 24 | header_len | header | body`.
pub fn frame_of(header: &[u8], body: &[u8]) -> Vec<u8> {
    let serialize_type = u32::from(header.first() != Some(&b'{'));
    let mut out = Vec::with_capacity(8 + header.len() + body.len());
    out.extend_from_slice(&((4 + header.len() + body.len()) as u32).to_be_bytes());
    out.extend_from_slice(&(serialize_type << 24 | header.len() as u32).to_be_bytes());
    out.extend_from_slice(header);
    out.extend_from_slice(body);
    out
}

fn frame_and_header_seeds(dir: &Path) -> std::io::Result<Vec<Seed>> {
    let mut seeds = Vec::new();
    let mut names: Vec<String> = fs::read_dir(dir)?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".header.raw"))
        .collect();
    names.sort();
    let mut frames = Vec::new();
    for name in &names {
        let stem = name.trim_end_matches(".header.raw");
        let header = fs::read(dir.join(name))?;
        let body = fs::read(dir.join(format!("{stem}.body.bin"))).unwrap_or_default();
        let target = if header.first() == Some(&b'{') { "json_header" } else { "binary_header" };
        seeds.push(seed(target, format!("wire-{stem}"), header.clone()));
        let frame = frame_of(&header, &body);
        seeds.push(seed("frame", format!("wire-{stem}"), frame.clone()));
        frames.push(frame);
    }
    let java_json = hex(JAVA_JSON_FRAME);
    let java_binary = hex(JAVA_BINARY_FRAME);
    seeds.push(seed("json_header", "java-route-request", java_json[8..].to_vec()));
    seeds.push(seed("binary_header", "java-route-request", java_binary[8..].to_vec()));
    seeds.push(seed("json_header", "lenient-fields", &br#"{"language":9,"code":105,"remark":"","extFields":{"a":1,"b":null,"c":true,"d":{"x":[1]}},"unknown":[1,2]}"#[..]));
    seeds.push(seed("frame", "java-route-request-json", java_json.clone()));
    seeds.push(seed("frame", "java-route-request-binary", java_binary.clone()));
    seeds.push(seed("frame", "two-frames", [java_binary.as_slice(), java_json.as_slice()].concat()));
    seeds.push(seed("frame", "partial-frame", java_json[..20].to_vec()));
    if let Some(first) = frames.first() {
        seeds.push(seed("frame", "java-then-wire", [java_json.as_slice(), first.as_slice()].concat()));
    }
    Ok(seeds)
}

/// The register-body target's mode byte (see `targets::register_body`).
fn mode(version: i32, compressed: bool, deflate: u8) -> u8 {
    let index = REGISTER_VERSIONS.iter().position(|v| *v == version).expect("a listed version") as u8;
    index | u8::from(compressed) << 3 | deflate << 4
}

/// The inflated layout of a one-topic compressed body (compressed.rs tests); `mappings` adds the
/// V5_0_0 mapping count, which 4.9.x brokers do not write.
fn compressed_stream(mappings: bool) -> Vec<u8> {
    let mut s = Vec::new();
    let chunk = |s: &mut Vec<u8>, bytes: &[u8]| {
        s.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
        s.extend_from_slice(bytes);
    };
    chunk(&mut s, br#"{"counter":5,"stateVersion":0,"timestamp":1700000000123}"#);
    s.extend_from_slice(&1i32.to_be_bytes());
    chunk(&mut s, b"TopicTest 4 4 6 SINGLE_TAG {}");
    chunk(&mut s, b"[]");
    if mappings {
        s.extend_from_slice(&1i32.to_be_bytes());
        chunk(&mut s, br#"{"bname":"broker-a","currIdMap":{0:0,1:1},"epoch":9,"topic":"TopicTest","totalQueues":2}"#);
    }
    s
}

/// Java's `RegisterBrokerBody.encode(true)` output from compressed.rs tests (zlib, one topic).
const JAVA_COMPRESSED_BASE64: &str = "eNpjYGCwqFZKzi/NK0ktUrIy1VEqLkksSQ1LLSrOzM9TsjLQUSrJzE0FCuYWKFkZmhtAgaGRcS0DAwMjEMuG5BdkJocA1SiYAKGZQrCnn7uPa3yIo7tCNUgRU3QskGQAAFURG2s=";

fn base64(s: &str) -> Vec<u8> {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let (mut bits, mut nbits, mut out) = (0u32, 0, Vec::new());
    for c in s.bytes().filter(|c| *c != b'=') {
        bits = bits << 6 | alphabet.iter().position(|a| *a == c).unwrap_or(0) as u32;
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            out.push((bits >> nbits) as u8);
        }
    }
    out
}

const BARE_KEYS_BODY: &[u8] = br#"{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":"5","timestamp":17},"topicConfigTable":{"A":{"topicName":"A","readQueueNums":8,"writeQueueNums":8,"perm":6,"topicSynFlag":3},"B":{}},"topicQueueMappingInfoMap":{"A":{"bname":"b","currIdMap":{0:0,1:1},"epoch":9,"topic":"A","totalQueues":2}}}}"#;
const FOUR_NINE_BODY: &[u8] = br#"{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":2,"timestamp":1690000000000},"topicConfigTable":{"T":{"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"T","topicSysFlag":0,"writeQueueNums":4}}}}"#;
const OLD_WRAPPER_BODY: &[u8] = br#"{"dataVersion":{"counter":1},"topicConfigTable":{"T":{"topicName":"T"},"U":null}}"#;

fn register_body_seeds(dir: &Path) -> std::io::Result<Vec<Seed>> {
    let with_mode = |m: u8, body: &[u8]| [&[m][..], body].concat();
    let plain_01 = fs::read(dir.join("01-register-broker.json-header.req.body.bin"))?;
    let plain_02 = fs::read(dir.join("02-register-broker.rocketmq-header.req.body.bin"))?;
    let raw_08 = fs::read(dir.join("08-register-broker.compressed.req.body.bin"))?;
    let inflated_08 = fs::read(dir.join("08-register-broker.compressed.req.body.inflated.bin"))?;
    let java_zlib = base64(JAVA_COMPRESSED_BASE64);
    let s = "register_body";
    Ok(vec![
        seed(s, "wire-01-plain-json", with_mode(mode(479, false, 0), &plain_01)),
        seed(s, "wire-02-plain-json", with_mode(mode(479, false, 0), &plain_02)),
        seed(s, "wire-08-raw-deflate", with_mode(mode(479, true, 0), &raw_08)),
        seed(s, "wire-08-inflated-raw-deflated-here", with_mode(mode(479, true, 2), &inflated_08)),
        seed(s, "wire-08-inflated-zlib-here-v413", with_mode(mode(413, true, 1), &inflated_08)),
        seed(s, "java-zlib-base64-vector", with_mode(mode(479, true, 0), &java_zlib)),
        seed(s, "java-zlib-flag-false", with_mode(mode(479, false, 0), &java_zlib)),
        seed(s, "stream-mappings-zlib-here", with_mode(mode(479, true, 1), &compressed_stream(true))),
        seed(s, "stream-4.9.x-zlib-here", with_mode(mode(398, true, 1), &compressed_stream(false))),
        seed(s, "stream-4.9.x-raw-deflated-here", with_mode(mode(401, true, 2), &compressed_stream(false))),
        seed(s, "stream-zlib-flag-false", with_mode(mode(479, false, 1), &compressed_stream(true))),
        seed(s, "stream-zlib", with_mode(mode(479, true, 0), &zlib(&compressed_stream(true)))),
        seed(s, "stream-raw-deflate", with_mode(mode(412, true, 0), &raw_deflate(&compressed_stream(false)))),
        seed(s, "bare-numeric-keys", with_mode(mode(479, false, 0), BARE_KEYS_BODY)),
        seed(s, "bare-numeric-keys-4.9.x", with_mode(mode(398, false, 0), BARE_KEYS_BODY)),
        seed(s, "plain-4.9.x", with_mode(mode(398, false, 0), FOUR_NINE_BODY)),
        seed(s, "wrapper-before-v3.0.11", with_mode(mode(36, false, 0), OLD_WRAPPER_BODY)),
        seed(s, "wrapper-version-0", with_mode(mode(0, true, 0), OLD_WRAPPER_BODY)),
    ])
}

fn json_body_seeds(dir: &Path) -> std::io::Result<Vec<Seed>> {
    let route = fs::read(dir.join("06-register-topic-in-namesrv.req.body.bin"))?;
    let s = "json_bodies";
    Ok(vec![
        seed(s, "wire-06-register-topic", [&[0u8][..], &route].concat()),
        seed(
            s,
            "register-topic-old-spelling",
            &b"\x00{\"queueDatas\":[{\"brokerName\":\"b\",\"perm\":6,\"topicSynFlag\":1}]}"[..],
        ),
        seed(s, "data-version", &b"\x01{\"counter\":5,\"stateVersion\":0,\"timestamp\":1700000000123}"[..]),
        seed(s, "data-version-strings", &b"\x01{\"counter\":\"7\",\"stateVersion\":null,\"timestamp\":1.5e3}"[..]),
    ])
}

fn properties_seeds() -> Vec<Seed> {
    let java_like = "# comment\n! also\n  a=1\nb : 2\nc 3\nd=x\\\n   y\ne=\\u00e9\\tz\nf\n{key=value}\n";
    let namesrv = "rocketmqHome=/opt/rocketmq\nlistenPort=9876\nscanNotActiveBrokerInterval=5000\n\
        orderMessageEnable=true\nclusterTest=false\nkvConfigPath=/tmp/kv.json\n";
    let written = "a=c\\:\\\\d\nb\\ key=\\ v\\=1\\n\n";
    let updates = [
        ("runtime-switches", "orderMessageEnable=true\nenableTopicList=false\nwaitSecondsForService=3\n"),
        ("snake-case", "scan_interval_ms = 100\nroute_cache_max_bytes: 4096\nsupport_acting_master true\n"),
        ("blacklisted", "configStorePath=/etc/passwd\n"),
        ("own-blacklist", "configBlackList=a;b\n"),
        ("bad-value", "scanNotActiveBrokerInterval=soon\n"),
        ("unknown-key", "{key=value}\nproductEnvName=x\n"),
    ];
    let mut seeds = vec![
        seed("properties", "java-properties-load", java_like),
        seed("properties", "namesrv-config", namesrv),
        seed("properties", "written", written),
        seed("update_config", "namesrv-config", namesrv),
    ];
    seeds.extend(updates.iter().map(|(name, text)| seed("update_config", *name, *text)));
    seeds
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{find, TARGETS};
    use bytes::BytesMut;
    use namesrv::protocol::RemotingCodec;
    use tokio_util::codec::Decoder;

    #[test]
    fn every_target_has_seeds_and_every_seed_runs_clean() {
        let seeds = all(&fixtures_dir()).unwrap();
        for target in TARGETS {
            assert!(seeds.iter().filter(|s| s.target == target.name).count() >= 3, "{} has few seeds", target.name);
        }
        for s in &seeds {
            (find(s.target).unwrap().run)(&s.data);
        }
    }

    #[test]
    fn the_java_frames_decode_as_the_route_request() {
        for frame in [hex(JAVA_JSON_FRAME), hex(JAVA_BINARY_FRAME)] {
            let cmd = RemotingCodec::default().decode(&mut BytesMut::from(&frame[..])).unwrap().unwrap();
            assert_eq!((cmd.code, cmd.opaque, cmd.ext("topic")), (105, 42, Some("TopicTest")));
        }
    }

    #[test]
    fn the_committed_corpora_hold_the_current_seeds() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
        for s in all(&fixtures_dir()).unwrap() {
            let path = corpus.join(s.target).join(format!("seed-{}", s.name));
            assert_eq!(fs::read(&path).ok(), Some(s.data), "{} is stale: run scripts/fuzz.sh --seeds", path.display());
        }
    }
}
