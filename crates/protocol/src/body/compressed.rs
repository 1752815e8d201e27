//! The compressed REGISTER_BROKER body (Java's `RegisterBrokerBody.encode(true)`): a zlib or
//! raw-deflate stream of length-prefixed parts, with topic configs as space-separated lines.

use std::io::Read;

use flate2::read::{DeflateDecoder, ZlibDecoder};

use crate::body::pace::Pacer;
use crate::body::{BodyError, DataVersionJson, DecodeContext, MappingInfoJson, RegisterBody};
use crate::code::version;
use crate::json::lenient::parse_lenient;
use crate::model::{DataVersion, TopicConfig, TopicQueueMappingInfo, TopicTable};

/// Inflated sizes above this must stay within [`MAX_RATIO`] of the compressed size.
const RATIO_FLOOR_BYTES: usize = 1024 * 1024;

/// No register body compresses better than this; a stream that does is a compression bomb.
const MAX_RATIO: usize = 500;

/// Inflates a zlib stream (what Java writes) or raw deflate (what rocketmq-rust writes),
/// stopping at `limit` bytes and at an absurd ratio.
fn inflate(body: &[u8], limit: usize, pacer: &Pacer) -> Result<Vec<u8>, BodyError> {
    let ratio_cap = body.len().saturating_mul(MAX_RATIO).max(RATIO_FLOOR_BYTES);
    let cap = limit.min(ratio_cap);
    let looks_zlib = body.len() >= 2 && body[0] & 0x0F == 8 && (u16::from(body[0]) << 8 | u16::from(body[1])) % 31 == 0;
    let read_all = |reader: &mut dyn Read| -> Result<Vec<u8>, BodyError> {
        let mut out = Vec::with_capacity(body.len().saturating_mul(4).min(cap));
        Paced(reader, pacer).take(cap as u64 + 1).read_to_end(&mut out).map_err(BodyError::Inflate)?;
        if out.len() > cap {
            return Err(if cap == limit {
                BodyError::InflatedTooLarge { limit }
            } else {
                BodyError::AbsurdRatio { ratio: MAX_RATIO }
            });
        }
        Ok(out)
    };
    if looks_zlib {
        match read_all(&mut ZlibDecoder::new(body)) {
            Err(BodyError::Inflate(_)) => {}
            other => return other,
        }
    }
    read_all(&mut DeflateDecoder::new(body))
}

/// Inflates at most [`PACED_READ_BYTES`] a read and paces between reads, so a large body's
/// inflate gives up its core as its parse does.
struct Paced<'p, R>(R, &'p Pacer);

/// What one paced read inflates at most (well under a slice of work).
const PACED_READ_BYTES: usize = 64 * 1024;

impl<R: Read> Read for Paced<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.1.pace();
        let len = buf.len().min(PACED_READ_BYTES);
        self.0.read(&mut buf[..len])
    }
}

/// A bounds-checked reader over the inflated stream.
struct Stream<'a> {
    buf: &'a [u8],
}

impl<'a> Stream<'a> {
    fn int(&mut self, what: &'static str) -> Result<i32, BodyError> {
        let bytes = self.bytes(4, what)?;
        Ok(i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], BodyError> {
        if n > self.buf.len() {
            return Err(BodyError::Truncated(what));
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    fn chunk(&mut self, what: &'static str) -> Result<&'a [u8], BodyError> {
        let len = self.int(what)?;
        let len = usize::try_from(len).map_err(|_| BodyError::Truncated(what))?;
        self.bytes(len, what)
    }

    fn count(&mut self, what: &'static str) -> Result<usize, BodyError> {
        let n = self.int(what)?;
        // Every entry takes at least its 4-byte length, which bounds a hostile count.
        usize::try_from(n).ok().filter(|n| n.saturating_mul(4) <= self.buf.len()).ok_or(BodyError::Truncated(what))
    }
}

/// The compressed layout: dataVersion JSON, topic count, topic lines, filter server JSON, and
/// from V5_0_0 on, a count of static-topic mappings as JSON.
pub fn decode_compressed(
    body: &[u8],
    request_version: i32,
    context: &DecodeContext,
) -> Result<RegisterBody, BodyError> {
    let DecodeContext { limits, pacer } = context;
    let inflated = inflate(body, limits.max_inflated_bytes, pacer)?;
    let mut s = Stream { buf: &inflated };
    let data_version = DataVersion::from(parse_lenient::<DataVersionJson>(s.chunk("dataVersion")?)?);
    let topic_count = s.count("topic count")?;
    if topic_count > limits.max_topics {
        return Err(BodyError::TooManyTopics { max: limits.max_topics });
    }
    let mut topics = TopicTable::with_capacity(topic_count);
    for _ in 0..topic_count {
        let tc = parse_topic_line(s.chunk("topic config")?)?;
        topics.push(tc.topic_name.as_deref().unwrap_or_default(), &tc);
        pacer.topic_parsed(topics.len());
    }
    let filter_servers: Option<Vec<String>> = parse_lenient(s.chunk("filterServerList")?)?;
    let mut mappings = Vec::new();
    if request_version >= version::V5_0_0 {
        let count = s.count("mapping count")?;
        for _ in 0..count {
            let info = TopicQueueMappingInfo::from(parse_lenient::<MappingInfoJson>(s.chunk("mapping")?)?);
            mappings.push((info.topic.clone(), info));
        }
    }
    Ok(RegisterBody { topics, data_version, filter_servers, mappings })
}

/// `"<name> <read> <write> <perm> <filterType>[ <attributes>]"`; sysFlag is not carried.
fn parse_topic_line(line: &[u8]) -> Result<TopicConfig, BodyError> {
    let text = String::from_utf8_lossy(line);
    let bad = || BodyError::TopicLine(text.chars().take(120).collect());
    let fields: Vec<&str> = text.split(' ').filter(|f| !f.is_empty()).collect();
    if fields.len() < 5 {
        return Err(bad());
    }
    let int = |s: &str| s.parse::<i32>().map_err(|_| bad());
    Ok(TopicConfig {
        topic_name: Some(fields[0].to_owned()),
        read_queue_nums: int(fields[1])?,
        write_queue_nums: int(fields[2])?,
        perm: int(fields[3])?,
        topic_sys_flag: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::register::decode_register_body;
    use crate::body::BodyLimits;

    fn limits(max_inflated_bytes: usize) -> DecodeContext {
        DecodeContext::unpaced(BodyLimits { max_inflated_bytes, max_topics: 1000 })
    }

    #[test]
    fn a_compression_bomb_stops_at_an_absurd_ratio_and_a_topic_count_over_the_cap_is_refused() {
        let mut zlib = ZlibEncoder::new(Vec::new(), Compression::best());
        zlib.write_all(&vec![0u8; 4 << 20]).unwrap();
        let bomb = zlib.finish().unwrap();
        let err = decode_register_body(Some(&bomb), true, 479, &limits(64 << 20)).unwrap_err();
        assert!(matches!(err, BodyError::AbsurdRatio { ratio: 500 }), "{err}");
        let mut zlib = ZlibEncoder::new(Vec::new(), Compression::best());
        zlib.write_all(&example_stream()).unwrap();
        let one_topic = zlib.finish().unwrap();
        let none_allowed = BodyLimits { max_inflated_bytes: 1 << 20, max_topics: 0 };
        let err = decode_register_body(Some(&one_topic), true, 479, &DecodeContext::unpaced(none_allowed)).unwrap_err();
        assert!(matches!(err, BodyError::TooManyTopics { max: 0 }), "{err}");
    }
    use flate2::write::{DeflateEncoder, ZlibEncoder};
    use flate2::Compression;
    use std::io::Write;

    /// The inflated stream of a one-topic registration, as a 5.x Java broker writes it.
    fn example_stream() -> Vec<u8> {
        let mut s = Vec::new();
        let dv = br#"{"counter":5,"stateVersion":0,"timestamp":1700000000123}"#;
        s.extend_from_slice(&(dv.len() as i32).to_be_bytes());
        s.extend_from_slice(dv);
        s.extend_from_slice(&1i32.to_be_bytes());
        let line = b"TopicTest 4 4 6 SINGLE_TAG {}";
        s.extend_from_slice(&(line.len() as i32).to_be_bytes());
        s.extend_from_slice(line);
        s.extend_from_slice(&2i32.to_be_bytes());
        s.extend_from_slice(b"[]");
        s.extend_from_slice(&0i32.to_be_bytes());
        s
    }

    #[test]
    fn a_paced_inflate_reads_in_bounded_steps_and_yields_the_same_bytes() {
        struct Counting<'a>(&'a [u8], Vec<usize>);
        impl Read for Counting<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.1.push(buf.len());
                let n = buf.len().min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let mut inner = Counting(&data, Vec::new());
        let mut out = Vec::with_capacity(data.len() + 1);
        Paced(&mut inner, &Pacer::off()).read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
        assert!(inner.1.iter().all(|&n| n <= PACED_READ_BYTES), "{:?}", inner.1);
        assert!(inner.1.len() >= data.len() / PACED_READ_BYTES, "{} reads", inner.1.len());
        let mut zlib = ZlibEncoder::new(Vec::new(), Compression::fast());
        zlib.write_all(&data).unwrap();
        let paced = inflate(&zlib.finish().unwrap(), 1 << 20, &Pacer::every(std::time::Duration::ZERO));
        assert_eq!(paced.unwrap(), data, "a decode that yields at every step inflates the same");
    }

    #[test]
    fn a_one_topic_stream_is_107_bytes_and_decodes_from_zlib_and_raw_deflate() {
        let stream = example_stream();
        assert_eq!(stream.len(), 107);
        let mut zlib = ZlibEncoder::new(Vec::new(), Compression::best());
        zlib.write_all(&stream).unwrap();
        let mut raw = DeflateEncoder::new(Vec::new(), Compression::best());
        raw.write_all(&stream).unwrap();
        for body in [zlib.finish().unwrap(), raw.finish().unwrap()] {
            let decoded = decode_register_body(Some(&body), true, 479, &limits(1 << 20)).unwrap();
            assert_eq!(decoded.data_version, DataVersion { counter: 5, state_version: 0, timestamp: 1700000000123 });
            assert_eq!(decoded.topics.len(), 1);
            let topic = decoded.topics.iter().next().unwrap();
            assert_eq!((topic.key, topic.queue.read_queue_nums), ("TopicTest", 4));
            assert_eq!(decoded.filter_servers, Some(vec![]));
        }
    }

    #[test]
    fn a_java_written_base64_vector_decodes() {
        let b64 = "eNpjYGCwqFZKzi/NK0ktUrIy1VEqLkksSQ1LLSrOzM9TsjLQUSrJzE0FCuYWKFkZmhtAgaGRcS0DAwMjEMuG5BdkJocA1SiYAKGZQrCnn7uPa3yIo7tCNUgRU3QskGQAAFURG2s=";
        let body = base64_decode(b64);
        assert_eq!(&body[..2], &[0x78, 0xda]);
        let decoded = decode_register_body(Some(&body), true, 479, &limits(1 << 20)).unwrap();
        assert_eq!(decoded.topics.iter().next().unwrap().name, "TopicTest");
    }

    #[test]
    fn truncated_stream_and_hostile_counts_are_errors() {
        let stream = example_stream();
        for cut in [3, 20, 70, 100] {
            let mut zlib = ZlibEncoder::new(Vec::new(), Compression::fast());
            zlib.write_all(&stream[..cut]).unwrap();
            assert!(
                decode_register_body(Some(&zlib.finish().unwrap()), true, 479, &limits(1 << 20)).is_err(),
                "cut {cut}"
            );
        }
        let mut zlib = ZlibEncoder::new(Vec::new(), Compression::fast());
        zlib.write_all(&vec![0u8; 10_000]).unwrap();
        let bomb = zlib.finish().unwrap();
        assert!(matches!(
            decode_register_body(Some(&bomb), true, 479, &limits(1000)),
            Err(BodyError::InflatedTooLarge { .. })
        ));
    }

    #[test]
    fn deflated_body_sent_with_compressed_false_is_still_read() {
        let mut zlib = ZlibEncoder::new(Vec::new(), Compression::best());
        zlib.write_all(&example_stream()).unwrap();
        let decoded = decode_register_body(Some(&zlib.finish().unwrap()), false, 479, &limits(1 << 20)).unwrap();
        assert_eq!(decoded.topics.len(), 1);
        assert!(decode_register_body(Some(b"{not json"), false, 479, &limits(1 << 20)).is_err());
    }

    fn base64_decode(s: &str) -> Vec<u8> {
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut bits = 0u32;
        let mut nbits = 0;
        let mut out = Vec::new();
        for c in s.bytes().filter(|c| *c != b'=') {
            bits = bits << 6 | alphabet.iter().position(|a| *a == c).unwrap() as u32;
            nbits += 6;
            if nbits >= 8 {
                nbits -= 8;
                out.push((bits >> nbits) as u8);
            }
        }
        out
    }
}
