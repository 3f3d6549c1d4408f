//! The counters of one launch ([`Report`]): the performance proxy.

/// Counters of one launch (the performance proxy). See the crate documentation for how
/// each is counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Warp-level instructions executed (one per warp per instruction issued, whatever the
    /// number of active lanes; guarded-off instructions included).
    pub instructions: u64,
    /// Thread-level instructions: the active lanes of each warp instruction whose guard
    /// predicate was true.
    pub thread_instructions: u64,
    /// Warp-level global load instructions (`ld.global`, `ld.global.nc`, `ldu`, and generic
    /// loads whose lanes hit global memory).
    pub global_load_requests: u64,
    /// Warp-level global store instructions.
    pub global_store_requests: u64,
    /// Warp-level global atomic / reduction instructions.
    pub global_atomic_requests: u64,
    /// Distinct 32-byte sectors touched by global loads, summed over load requests.
    pub global_load_sectors: u64,
    /// Distinct 32-byte sectors touched by global stores, summed over store requests.
    pub global_store_sectors: u64,
    /// The minimum sectors the loads could have moved: per request, the distinct bytes
    /// touched divided by 32, rounded up.
    pub global_load_sectors_ideal: u64,
    /// The minimum sectors for the stores, counted as for loads.
    pub global_store_sectors_ideal: u64,
    /// `global_load_sectors + global_store_sectors`.
    pub sectors_moved: u64,
    /// `global_load_sectors_ideal + global_store_sectors_ideal`.
    pub sectors_ideal: u64,
    /// Warp-level shared-memory load instructions (including atomics on shared memory).
    pub shared_load_requests: u64,
    /// Warp-level shared-memory store instructions.
    pub shared_store_requests: u64,
    /// Extra shared-memory wavefronts caused by bank conflicts (32 banks of 4 bytes).
    pub bank_conflicts: u64,
    /// Block-wide barrier completions (one per barrier per block each time it releases).
    pub barriers: u64,
    /// Lines written by `printf` in the kernel, each prefixed with the block and thread
    /// (blocks run in parallel, so lines of different blocks may interleave in any order;
    /// within a block they are in execution order).
    pub printf: Vec<String>,
    /// Blocks run.
    pub blocks: u64,
    /// Threads run.
    pub threads: u64,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{} blocks, {} threads", self.blocks, self.threads)?;
        writeln!(
            f,
            "instructions: {} warp, {} thread",
            self.instructions, self.thread_instructions
        )?;
        writeln!(
            f,
            "global: {} load / {} store / {} atomic requests; sectors {} moved, {} ideal (efficiency {:.3})",
            self.global_load_requests,
            self.global_store_requests,
            self.global_atomic_requests,
            self.sectors_moved,
            self.sectors_ideal,
            self.coalescing_efficiency()
        )?;
        writeln!(
            f,
            "shared: {} load / {} store requests, {} bank conflicts",
            self.shared_load_requests, self.shared_store_requests, self.bank_conflicts
        )?;
        write!(f, "barriers: {}", self.barriers)
    }
}

impl Report {
    pub(crate) fn merge(&mut self, o: &Report) {
        self.instructions += o.instructions;
        self.thread_instructions += o.thread_instructions;
        self.global_load_requests += o.global_load_requests;
        self.global_store_requests += o.global_store_requests;
        self.global_atomic_requests += o.global_atomic_requests;
        self.global_load_sectors += o.global_load_sectors;
        self.global_store_sectors += o.global_store_sectors;
        self.global_load_sectors_ideal += o.global_load_sectors_ideal;
        self.global_store_sectors_ideal += o.global_store_sectors_ideal;
        self.shared_load_requests += o.shared_load_requests;
        self.shared_store_requests += o.shared_store_requests;
        self.bank_conflicts += o.bank_conflicts;
        self.barriers += o.barriers;
        self.blocks += o.blocks;
        self.printf.extend(o.printf.iter().cloned());
        self.threads += o.threads;
        self.sectors_moved = self.global_load_sectors + self.global_store_sectors;
        self.sectors_ideal = self.global_load_sectors_ideal + self.global_store_sectors_ideal;
    }

    /// Fraction of moved sectors that were needed (1.0 = perfectly coalesced); 1.0 when no
    /// global memory was touched.
    pub fn coalescing_efficiency(&self) -> f64 {
        if self.sectors_moved == 0 {
            1.0
        } else {
            self.sectors_ideal as f64 / self.sectors_moved as f64
        }
    }
}
