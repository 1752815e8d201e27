//! A small seeded mutator for the smoke driver, in the spirit of AFL's havoc stage: stacked bit
//! flips, interesting integers, inserted tokens, deleted or duplicated ranges and splices. It has
//! no coverage feedback; the coverage-guided runs are AFL++'s (scripts/fuzz.sh).

/// Largest input the mutator makes (AFL's default `-G` is far larger; the decoders' own limits
/// make longer inputs uninteresting).
pub const MAX_LEN: usize = 64 * 1024;

/// Integers that sit on boundaries, written big-endian as RocketMQ does.
const INTERESTING: [i32; 12] = [0, 1, -1, 4, 8, 37, 413, 127, 255, 0x00FF_FFFF, i32::MAX, i32::MIN];

/// Fragments of the formats under test: JSON punctuation, fastjson bare keys, escapes, and names.
const TOKENS: [&[u8]; 18] = [
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b":",
    b",",
    b"\\",
    b"\\u00",
    b"null",
    b"-0",
    b"1e999",
    b"{0:",
    b"\"extFields\":{",
    b"\"topicConfigTable\":{",
    b"\"dataVersion\":{",
    b"=",
    b"\n",
];

/// xorshift64*: deterministic for a seed, good enough to pick mutations.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` (zero is replaced, xorshift cannot leave it).
    pub fn new(seed: u64) -> Self {
        Self(if seed == 0 { 0x9E37_79B9_7F4A_7C15 } else { seed })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// A mutant of `input`: 1 to 8 stacked edits, sometimes splicing in part of `other`.
pub fn mutate(input: &[u8], other: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(8) {
        edit(&mut out, other, rng);
    }
    out.truncate(MAX_LEN);
    out
}

fn edit(out: &mut Vec<u8>, other: &[u8], rng: &mut Rng) {
    let len = out.len();
    let at = if len == 0 { 0 } else { rng.below(len) };
    match rng.below(9) {
        0 if len > 0 => out[at] ^= 1 << rng.below(8),
        1 if len > 0 => out[at] = rng.next_u64() as u8,
        2 if len >= 4 => {
            let at = rng.below(len - 3);
            let value = INTERESTING[rng.below(INTERESTING.len())].to_be_bytes();
            out[at..at + 4].copy_from_slice(&value);
        }
        3 if len > 0 => out[at] = out[at].wrapping_add(rng.below(35) as u8).wrapping_sub(17),
        4 => {
            let token = TOKENS[rng.below(TOKENS.len())];
            out.splice(at..at, token.iter().copied());
        }
        5 if len > 1 => {
            let n = 1 + rng.below((len - at).min(64));
            out.drain(at..at + n);
        }
        6 if len > 1 => {
            let n = 1 + rng.below((len - at).min(64));
            let copy = out[at..at + n].to_vec();
            let to = rng.below(len);
            out.splice(to..to, copy);
        }
        7 if !other.is_empty() => {
            let from = rng.below(other.len());
            let n = 1 + rng.below((other.len() - from).min(256));
            out.truncate(at);
            out.extend_from_slice(&other[from..from + n]);
        }
        _ => out.insert(at, rng.next_u64() as u8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_makes_the_same_mutants() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..1000 {
            assert_eq!(mutate(b"{\"code\":105}", b"abc", &mut a), mutate(b"{\"code\":105}", b"abc", &mut b));
        }
    }

    #[test]
    fn empty_inputs_and_long_inputs_stay_in_bounds() {
        let mut rng = Rng::new(1);
        for _ in 0..10_000 {
            assert!(mutate(b"", b"", &mut rng).len() <= MAX_LEN);
            assert!(mutate(&[7; MAX_LEN], &[1; 300], &mut rng).len() <= MAX_LEN);
        }
    }
}
