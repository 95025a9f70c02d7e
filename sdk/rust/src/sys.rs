//! The boundary to the host: bytes in, reply bytes out. Everything above it (framing, statuses,
//! errors) is plain Rust, the same on every target and unit-tested natively.
//!
//! On wasm32 these are the Extism kernel (`extism:host/env`) and the Skillbox host functions
//! (`extism:host/user`). Natively there is no host: the calls answer FAILED and [`input`]
//! panics; the crate's own tests substitute a fake.

pub(crate) use imp::{env, fetch, input, log, output, read_file, set_error, write_file};

/// Reads a block of `len` bytes through the kernel's loads: 8 bytes per call, then the tail a
/// byte at a time. Offsets passed to the loaders are relative to the block.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn read_block(
    len: u64,
    mut load_u64: impl FnMut(u64) -> u64,
    mut load_u8: impl FnMut(u64) -> u8,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(len as usize);
    let mut i = 0;
    while i + 8 <= len {
        out.extend_from_slice(&load_u64(i).to_le_bytes());
        i += 8;
    }
    while i < len {
        out.push(load_u8(i));
        i += 1;
    }
    out
}

/// Writes `data` through the kernel's stores, the mirror of [`read_block`].
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn write_block(
    data: &[u8],
    mut store_u64: impl FnMut(u64, u64),
    mut store_u8: impl FnMut(u64, u8),
) {
    let mut chunks = data.chunks_exact(8);
    let mut i = 0;
    for c in &mut chunks {
        store_u64(
            i,
            u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
        );
        i += 8;
    }
    for &b in chunks.remainder() {
        store_u8(i, b);
        i += 1;
    }
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use super::{read_block, write_block};

    // Every offset is an Extism memory block offset (i64 on the wire), not an address in this
    // module's memory. u8 arguments and results travel as i32.
    #[link(wasm_import_module = "extism:host/env")]
    extern "C" {
        fn alloc(len: u64) -> u64;
        fn free(offset: u64);
        fn length(offset: u64) -> u64;
        fn load_u8(offset: u64) -> u8;
        fn load_u64(offset: u64) -> u64;
        fn store_u8(offset: u64, value: u8);
        fn store_u64(offset: u64, value: u64);
        fn input_length() -> u64;
        fn input_load_u8(offset: u64) -> u8;
        fn input_load_u64(offset: u64) -> u64;
        fn output_set(offset: u64, len: u64);
        fn error_set(offset: u64);
    }

    // The host functions of skillbox/v1 (docs/abi.md §4).
    #[link(wasm_import_module = "extism:host/user")]
    extern "C" {
        fn skillbox_fetch(request: u64, body: u64) -> u64;
        fn skillbox_env(name: u64) -> u64;
        fn skillbox_read_file(path: u64) -> u64;
        fn skillbox_write_file(path: u64, data: u64) -> u64;
        fn skillbox_log(level: i32, message: u64);
    }

    /// An argument block, freed when dropped: the host reads arguments and never frees them.
    /// Empty data is offset 0, the ABI's "absent", because the kernel cannot allocate an empty
    /// block.
    struct Block(u64);

    impl Block {
        fn new(data: &[u8]) -> Block {
            if data.is_empty() {
                return Block(0);
            }
            // SAFETY: the kernel's functions only touch the kernel's own memory, within the
            // block alloc returned.
            unsafe {
                let off = alloc(data.len() as u64);
                if off == 0 {
                    panic!("skillbox: the host cannot allocate {} bytes", data.len());
                }
                write_block(
                    data,
                    |i, v| store_u64(off + i, v),
                    |i, v| store_u8(off + i, v),
                );
                Block(off)
            }
        }

        /// Leaves the block to the host (the output block), returning its offset.
        fn leak(self) -> u64 {
            let off = self.0;
            std::mem::forget(self);
            off
        }
    }

    impl Drop for Block {
        fn drop(&mut self) {
            if self.0 != 0 {
                // SAFETY: a live block this module allocated and nobody else frees.
                unsafe { free(self.0) }
            }
        }
    }

    /// Copies a reply block out of the kernel and frees it: replies belong to the guest.
    fn reply(off: u64) -> Vec<u8> {
        if off == 0 {
            return Vec::new();
        }
        // SAFETY: off is a block the host allocated for us; reads stay inside its length.
        unsafe {
            let len = length(off);
            let data = read_block(len, |i| load_u64(off + i), |i| load_u8(off + i));
            free(off);
            data
        }
    }

    pub(crate) fn input() -> Vec<u8> {
        // SAFETY: the input loads read the call's input, within its length.
        unsafe { read_block(input_length(), |i| input_load_u64(i), |i| input_load_u8(i)) }
    }

    pub(crate) fn output(data: &[u8]) {
        if data.is_empty() {
            return; // no output is empty output
        }
        let block = Block::new(data);
        // SAFETY: the output block stays allocated until the call ends; the host reads it then.
        unsafe { output_set(block.leak(), data.len() as u64) }
    }

    pub(crate) fn set_error(msg: &[u8]) {
        let block = Block::new(if msg.is_empty() { b"error" } else { msg });
        // SAFETY: as for output.
        unsafe { error_set(block.leak()) }
    }

    pub(crate) fn fetch(request: &[u8], body: &[u8]) -> Vec<u8> {
        let (r, b) = (Block::new(request), Block::new(body));
        // SAFETY: both are live blocks or 0, as the ABI asks.
        reply(unsafe { skillbox_fetch(r.0, b.0) })
    }

    pub(crate) fn env(name: &[u8]) -> Vec<u8> {
        let n = Block::new(name);
        // SAFETY: as for fetch.
        reply(unsafe { skillbox_env(n.0) })
    }

    pub(crate) fn read_file(path: &[u8]) -> Vec<u8> {
        let p = Block::new(path);
        // SAFETY: as for fetch.
        reply(unsafe { skillbox_read_file(p.0) })
    }

    pub(crate) fn write_file(path: &[u8], data: &[u8]) -> Vec<u8> {
        let (p, d) = (Block::new(path), Block::new(data));
        // SAFETY: as for fetch.
        reply(unsafe { skillbox_write_file(p.0, d.0) })
    }

    pub(crate) fn log(level: i32, msg: &[u8]) {
        let m = Block::new(msg);
        // SAFETY: as for fetch.
        unsafe { skillbox_log(level, m.0) }
    }
}

#[cfg(all(not(target_arch = "wasm32"), not(test)))]
mod imp {
    /// Every host call's reply natively: FAILED, with the reason.
    fn no_host() -> Vec<u8> {
        let mut r = vec![5u8];
        r.extend_from_slice(b"not running in a Skillbox WebAssembly guest");
        r
    }

    pub(crate) fn input() -> Vec<u8> {
        panic!("skillbox: a skill needs the Skillbox host; build it for wasm32-wasip1 (or wasm32-wasi)")
    }
    pub(crate) fn output(_: &[u8]) {}
    pub(crate) fn set_error(_: &[u8]) {}
    pub(crate) fn fetch(_: &[u8], _: &[u8]) -> Vec<u8> {
        no_host()
    }
    pub(crate) fn env(_: &[u8]) -> Vec<u8> {
        no_host()
    }
    pub(crate) fn read_file(_: &[u8]) -> Vec<u8> {
        no_host()
    }
    pub(crate) fn write_file(_: &[u8], _: &[u8]) -> Vec<u8> {
        no_host()
    }
    pub(crate) fn log(_: i32, _: &[u8]) {}
}

/// The crate's tests run against a fake host, one per test thread.
#[cfg(all(not(target_arch = "wasm32"), test))]
pub(crate) mod imp {
    use std::cell::RefCell;

    /// A host call as the fake saw it: the function's name and its argument blocks.
    pub(crate) type Call = (&'static str, Vec<Vec<u8>>);

    /// What the fake host answers and what it recorded.
    #[derive(Default)]
    pub(crate) struct Fake {
        pub input: Vec<u8>,
        pub output: Option<Vec<u8>>,
        pub error: Option<Vec<u8>>,
        pub logs: Vec<(i32, String)>,
        pub calls: Vec<Call>,
        /// The reply to each call, in order; an empty reply once they run out.
        pub replies: Vec<Vec<u8>>,
    }

    thread_local! {
        static FAKE: RefCell<Fake> = RefCell::new(Fake::default());
    }

    /// Replaces this thread's fake host, returning the old one.
    pub(crate) fn install(fake: Fake) -> Fake {
        FAKE.with(|f| f.replace(fake))
    }

    fn call(name: &'static str, args: &[&[u8]]) -> Vec<u8> {
        FAKE.with(|f| {
            let mut f = f.borrow_mut();
            f.calls
                .push((name, args.iter().map(|a| a.to_vec()).collect()));
            if f.replies.is_empty() {
                Vec::new()
            } else {
                f.replies.remove(0)
            }
        })
    }

    pub(crate) fn input() -> Vec<u8> {
        FAKE.with(|f| f.borrow().input.clone())
    }
    pub(crate) fn output(data: &[u8]) {
        FAKE.with(|f| f.borrow_mut().output = Some(data.to_vec()));
    }
    pub(crate) fn set_error(msg: &[u8]) {
        FAKE.with(|f| f.borrow_mut().error = Some(msg.to_vec()));
    }
    pub(crate) fn fetch(request: &[u8], body: &[u8]) -> Vec<u8> {
        call("fetch", &[request, body])
    }
    pub(crate) fn env(name: &[u8]) -> Vec<u8> {
        call("env", &[name])
    }
    pub(crate) fn read_file(path: &[u8]) -> Vec<u8> {
        call("read_file", &[path])
    }
    pub(crate) fn write_file(path: &[u8], data: &[u8]) -> Vec<u8> {
        call("write_file", &[path, data])
    }
    pub(crate) fn log(level: i32, msg: &[u8]) {
        let msg = String::from_utf8_lossy(msg).into_owned();
        FAKE.with(|f| f.borrow_mut().logs.push((level, msg)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_trip_through_word_and_byte_stores() {
        for len in 0..40usize {
            let data: Vec<u8> = (0..len).map(|i| (i * 37 + 1) as u8).collect();
            // A fake kernel memory with the block at offset 16, counting calls.
            let mem = RefCell::new(vec![0u8; 16 + len]);
            let (mut wide, mut narrow) = (0, 0);
            write_block(
                &data,
                |i, v| {
                    wide += 1;
                    let at = 16 + i as usize;
                    mem.borrow_mut()[at..at + 8].copy_from_slice(&v.to_le_bytes());
                },
                |i, v| {
                    narrow += 1;
                    mem.borrow_mut()[16 + i as usize] = v;
                },
            );
            assert_eq!((wide, narrow), (len / 8, len % 8), "len {}", len);
            assert_eq!(&mem.borrow()[16..], &data[..]);
            let back = read_block(
                len as u64,
                |i| {
                    let at = 16 + i as usize;
                    let mut w = [0u8; 8];
                    w.copy_from_slice(&mem.borrow()[at..at + 8]);
                    u64::from_le_bytes(w)
                },
                |i| mem.borrow()[16 + i as usize],
            );
            assert_eq!(back, data, "len {}", len);
        }
    }

    use std::cell::RefCell;
}
