//! GPU architectures (`sm_80`, `sm_90a`, ...): what cubins are assembled for
//! ([`crate::cubin`]) and what the code generator's occupancy limits are given for.

/// A GPU architecture for `ptxas -arch`: `sm_<major><minor>`, optionally with the
/// architecture-specific suffix `a` (`sm_90a`). dpl's PTX targets `sm_70`, so only
/// `sm_70` and newer are accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Arch {
    /// Compute capability major version (7 for `sm_70`, 10 for `sm_100`).
    pub major: u32,
    /// Compute capability minor version (0 to 9).
    pub minor: u32,
    /// Architecture-specific variant (`sm_90a`): its cubins run only on exactly that
    /// compute capability.
    pub specific: bool,
}

impl Arch {
    /// Parses `sm_NN`, `sm_NNN` or the same with an `a` suffix. The last digit is the
    /// minor version. Fails with a message naming the accepted forms.
    pub fn parse(s: &str) -> Result<Arch, String> {
        let bad = |why: &str| {
            format!(
                "invalid GPU architecture `{s}`: {why} (expected `sm_` followed by the compute \
                 capability, e.g. `sm_70`, `sm_80`, `sm_90` or `sm_90a`; sm_70 or newer)"
            )
        };
        let rest = s
            .strip_prefix("sm_")
            .ok_or_else(|| bad("it does not start with `sm_`"))?;
        let (digits, specific) = match rest.strip_suffix('a') {
            Some(d) => (d, true),
            None => (rest, false),
        };
        if !(2..=3).contains(&digits.len()) || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("the compute capability must be 2 or 3 digits"));
        }
        let n: u32 = digits
            .parse()
            .map_err(|_| bad("the compute capability is not a number"))?;
        let arch = Arch {
            major: n / 10,
            minor: n % 10,
            specific,
        };
        if arch.major < 7 {
            return Err(bad("dpl's PTX needs sm_70 or newer"));
        }
        Ok(arch)
    }

    /// The compute capability as `10 * major + minor` (80 for `sm_80` and `sm_80a`), the
    /// key of [`GpuProgram::cubins`](crate::GpuProgram::cubins).
    pub fn number(&self) -> u32 {
        10 * self.major + self.minor
    }
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let a = if self.specific { "a" } else { "" };
        write!(f, "sm_{}{}{a}", self.major, self.minor)
    }
}

/// Parses a comma-separated list of architectures (`sm_80,sm_90`; spaces around the
/// names are ignored, empty entries skipped). Fails at the first invalid name.
pub fn parse_archs(list: &str) -> Result<Vec<Arch>, String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(Arch::parse)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_names_parse() {
        let a = Arch::parse("sm_80").unwrap();
        assert_eq!(
            (a.major, a.minor, a.specific, a.number()),
            (8, 0, false, 80)
        );
        let a = Arch::parse("sm_90a").unwrap();
        assert_eq!((a.major, a.minor, a.specific, a.number()), (9, 0, true, 90));
        let a = Arch::parse("sm_86").unwrap();
        assert_eq!(a.number(), 86);
        let a = Arch::parse("sm_120").unwrap();
        assert_eq!((a.major, a.minor, a.number()), (12, 0, 120));
        for s in ["sm_70", "sm_75", "sm_90a", "sm_100a", "sm_120"] {
            assert_eq!(Arch::parse(s).unwrap().to_string(), s);
        }
    }

    #[test]
    fn bad_arch_names_are_rejected_with_the_reason() {
        for (s, why) in [
            ("sm_60", "sm_70 or newer"),
            ("sm_52", "sm_70 or newer"),
            ("compute_80", "does not start with `sm_`"),
            ("80", "does not start with `sm_`"),
            ("sm_8", "2 or 3 digits"),
            ("sm_8x", "2 or 3 digits"),
            ("sm_", "2 or 3 digits"),
            ("sm_1000", "2 or 3 digits"),
            ("sm_80b", "2 or 3 digits"),
            ("SM_80", "does not start with `sm_`"),
        ] {
            let e = Arch::parse(s).unwrap_err();
            assert!(e.contains(why) && e.contains(&format!("`{s}`")), "{s}: {e}");
        }
    }

    #[test]
    fn arch_lists_parse() {
        let v = parse_archs(" sm_80, sm_90a ,,").unwrap();
        assert_eq!(
            v.iter().map(Arch::to_string).collect::<Vec<_>>(),
            ["sm_80", "sm_90a"]
        );
        assert!(parse_archs("").unwrap().is_empty());
        assert!(parse_archs("sm_80,sm_61").unwrap_err().contains("`sm_61`"));
    }
}
