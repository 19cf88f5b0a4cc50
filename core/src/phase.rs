//! The four phases of a bootstrap, named as tiny-cloud 3.x names them.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Boot,
    Early,
    Main,
    Final,
}

impl Phase {
    pub const ALL: [Phase; 4] = [Phase::Boot, Phase::Early, Phase::Main, Phase::Final];

    pub const fn name(self) -> &'static str {
        match self {
            Phase::Boot => "boot",
            Phase::Early => "early",
            Phase::Main => "main",
            Phase::Final => "final",
        }
    }

    pub fn from_name(name: &[u8]) -> Option<Phase> {
        Phase::ALL.into_iter().find(|phase| phase.name().as_bytes() == name)
    }
}
