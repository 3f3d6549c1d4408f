//! Robustness: mutated PTX (lines dropped, duplicated, characters changed) never makes
//! loading or launching panic; it loads, or fails with an error naming a line.

use dpl_sim::{Device, Error};

const SOURCES: &[&str] = &[
    include_str!("../examples/saxpy.ptx"),
    include_str!("../fixtures/divergent.ptx"),
    include_str!("../fixtures/calls.ptx"),
    include_str!("../fixtures/shuffle.ptx"),
];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn mutated_ptx_never_panics() {
    let dev = Device::new();
    dev.set_instruction_limit(10_000);
    let x = dev.upload(&[1.0f32; 64]);
    let y = dev.upload(&[2.0f32; 64]);
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let (mut loaded, mut rejected) = (0, 0);
    for src in SOURCES {
        let lines: Vec<&str> = src.lines().collect();
        for _ in 0..400 {
            let mut out: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
            for _ in 0..1 + rng.next() % 3 {
                let i = (rng.next() as usize) % out.len();
                match rng.next() % 4 {
                    0 => {
                        out.remove(i);
                    }
                    1 => {
                        let l = out[i].clone();
                        out.insert(i, l);
                    }
                    2 => {
                        let mut b = out[i].clone().into_bytes();
                        if !b.is_empty() {
                            let k = (rng.next() as usize) % b.len();
                            b[k] = b"%.;,{}[]0123456789abcxyz+-@!|<>"[(rng.next() % 31) as usize];
                        }
                        out[i] = String::from_utf8_lossy(&b).into_owned();
                    }
                    _ => {
                        let j = (rng.next() as usize) % out.len();
                        out.swap(i, j);
                    }
                }
            }
            let text = out.join("\n");
            match dev.load_ptx(&text) {
                Ok(m) => {
                    loaded += 1;
                    for k in m.kernel_names().to_vec() {
                        let r = dev.launch(
                            &m,
                            &k,
                            [1, 1, 1],
                            [64, 1, 1],
                            0,
                            &[64u32.into(), 2.0f32.into(), (&x).into(), (&y).into()],
                        );
                        if let Err(Error::Internal(msg)) = r {
                            panic!("internal error {msg} on\n{text}");
                        }
                    }
                }
                Err(Error::Parse { line, .. }) => {
                    assert!(line >= 1 && line as usize <= out.len() + 1);
                    rejected += 1;
                }
                Err(e) => panic!("unexpected error kind {e}"),
            }
        }
    }
    assert!(
        loaded > 0 && rejected > 0,
        "{loaded} loaded, {rejected} rejected"
    );
}
