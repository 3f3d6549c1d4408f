//! The schedule of nested levels, `#[parallel(inner = "...")]`: one definition shared by
//! the attribute's parser, the CPU code generator and the GPU backend.

/// How the nesting levels below the outermost are scheduled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Inner {
    /// Inner levels run as sequential loops inside each element of the outer level, in the
    /// thread of that element (Copperhead's default).
    #[default]
    Seq,
    /// Each outer element gets a CUDA thread block and its inner level runs across the
    /// block (nested tasks on the CPU).
    Block,
    /// Each outer element gets a warp and its inner level runs across the warp's lanes
    /// (nested tasks on the CPU).
    Warp,
    /// The variants are compiled and one is picked per call from the shape of the data.
    Auto,
}

impl Inner {
    /// Every schedule.
    pub const ALL: [Inner; 4] = [Inner::Seq, Inner::Block, Inner::Warp, Inner::Auto];

    /// The spelling used in the attribute (`"seq"`, `"block"`, `"warp"`, `"auto"`).
    pub fn name(self) -> &'static str {
        match self {
            Inner::Seq => "seq",
            Inner::Block => "block",
            Inner::Warp => "warp",
            Inner::Auto => "auto",
        }
    }

    /// The schedule spelled `name` in the attribute, if any.
    pub fn from_name(name: &str) -> Option<Inner> {
        Inner::ALL.into_iter().find(|i| i.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::Inner;

    #[test]
    fn names_round_trip() {
        for i in Inner::ALL {
            assert_eq!(Inner::from_name(i.name()), Some(i));
        }
        assert_eq!(Inner::from_name("Seq"), None);
        assert_eq!(Inner::default(), Inner::Seq);
    }
}
