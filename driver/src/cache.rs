//! A content-addressed on-disk cache of compiler outputs (as Triton's `~/.triton/cache`).
//!
//! An entry is addressed by a [`Key`]: the SHA-256 of everything the output depends on — the input text,
//! every option that changes the output (emit kind, target, backend, optimisation level, pipeline, …), and
//! the identity of this compiler build ([`build_id`]). A lookup that finds no entry, or an entry it cannot
//! read or whose checksum does not match, is a miss, never an error; a store that fails is ignored. Only
//! successful outputs are stored, so diagnostics are never served from the cache.
//!
//! Layout: `DIR/ab/cdef….bin` for key `abcdef…`, each file `MAGIC`, the payload's length (8 bytes, little
//! endian), the payload's SHA-256 (32 bytes), the payload. Files are written to a temporary name beside the
//! entry and renamed over it, so a reader never sees a partial entry and concurrent writers of the same key
//! (which write the same bytes) do not conflict.
//!
//! SHA-256 (the `sha2` crate: pure Rust, no build script or C code, hardware SHA extensions where the CPU
//! has them) rather than a faster non-cryptographic hash: keys must not collide, inputs are kilobytes, and
//! hashing them takes microseconds. The compiler binary is not hashed (250 MB: about half a second); its
//! build is identified like ccache does, by the path, size and modification time of the executable and of
//! every shared library it has mapped, plus the crate version (LLVM and MLIR are linked statically today, so the
//! executable covers them; a dynamically linked libLLVM would be covered by the mapped libraries).

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The first bytes of every entry; a new format gets a new magic (and old entries become misses).
const MAGIC: &[u8; 8] = b"tilecC01";

/// Environment variable naming the cache directory.
pub const CACHE_DIR_ENV: &str = "TILEC_CACHE_DIR";
/// Environment variable that disables the cache when set to `0`, `off`, `false` or `no`.
pub const CACHE_ENV: &str = "TILEC_CACHE";

/// The address of one cache entry: a SHA-256 over the input and options, built with [`KeyBuilder`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key([u8; 32]);

impl Key {
    /// The key as 64 lower-case hex digits.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }
}

/// Builds a [`Key`] from named fields. Every field is written with its name and length, so no two
/// different field lists give the same byte stream. Starts with the compiler's [`build_id`].
pub struct KeyBuilder {
    hasher: Sha256,
}

impl KeyBuilder {
    /// A key for the output of this compiler build (see [`build_id`]).
    pub fn new() -> Self {
        KeyBuilder::for_build(build_id())
    }

    /// A key for the output of the compiler build `build` (tests give their own).
    pub fn for_build(build: &str) -> Self {
        let mut builder = KeyBuilder { hasher: Sha256::new() };
        builder.field("format", MAGIC);
        builder.field("build", build.as_bytes());
        builder
    }

    /// Adds one named field.
    pub fn field(&mut self, name: &str, value: &[u8]) -> &mut Self {
        for part in [name.as_bytes(), value] {
            self.hasher.update((part.len() as u64).to_le_bytes());
            self.hasher.update(part);
        }
        self
    }

    /// The key.
    pub fn finish(&self) -> Key {
        Key(self.hasher.clone().finalize().into())
    }
}

impl Default for KeyBuilder {
    fn default() -> Self {
        KeyBuilder::new()
    }
}

/// The identity of this compiler build: the crate version, and the path, size and modification time of
/// the executable and of every shared library mapped into the process (Linux: `/proc/self/maps`). A
/// rebuilt binary or an upgraded shared library gives a different id, so a stale entry is never served; copying
/// the binary elsewhere only costs misses. Computed once per process (a few dozen `stat` calls).
pub fn build_id() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let mut id = format!("tilec {}", env!("CARGO_PKG_VERSION"));
        let mut files: Vec<PathBuf> = std::env::current_exe().into_iter().collect();
        if let Ok(maps) = std::fs::read_to_string("/proc/self/maps") {
            let mut libs: Vec<PathBuf> = maps
                .lines()
                .filter_map(|line| line.split_whitespace().nth(5))
                .filter(|path| path.starts_with('/') && path.contains(".so"))
                .map(PathBuf::from)
                .collect();
            libs.sort();
            libs.dedup();
            files.extend(libs);
        }
        for file in files {
            let stamp = std::fs::metadata(&file)
                .map(|m| {
                    let mtime = m
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map(|d| d.as_nanos())
                        .unwrap_or(0);
                    format!("{} {mtime}", m.len())
                })
                .unwrap_or_else(|_| "missing".into());
            id.push_str(&format!("\n{} {stamp}", file.display()));
        }
        id
    })
}

/// An on-disk cache in one directory.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// A cache in `dir` (created on the first store).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Cache { dir: dir.into() }
    }

    /// The cache the environment asks for: `$TILEC_CACHE_DIR`, else `$XDG_CACHE_HOME/tilec`, else
    /// `$HOME/.cache/tilec`; `None` when `TILEC_CACHE` is `0`/`off`/`false`/`no` or no directory is known.
    pub fn from_env() -> Option<Self> {
        if let Ok(setting) = std::env::var(CACHE_ENV) {
            if matches!(setting.trim().to_ascii_lowercase().as_str(), "0" | "off" | "false" | "no") {
                return None;
            }
        }
        let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let dir = non_empty(CACHE_DIR_ENV)
            .or_else(|| non_empty("XDG_CACHE_HOME").map(|d| d.join("tilec")))
            .or_else(|| non_empty("HOME").map(|d| d.join(".cache").join("tilec")))?;
        Some(Cache::new(dir))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the entry for `key` lives.
    pub fn path(&self, key: &Key) -> PathBuf {
        let hex = key.to_hex();
        self.dir.join(&hex[..2]).join(format!("{}.bin", &hex[2..]))
    }

    /// The stored bytes for `key`; `None` if there is no entry or it cannot be read or is damaged.
    pub fn lookup(&self, key: &Key) -> Option<Vec<u8>> {
        let bytes = std::fs::read(self.path(key)).ok()?;
        let rest = bytes.strip_prefix(MAGIC.as_slice())?;
        let (len, rest) = rest.split_first_chunk::<8>()?;
        let (sum, payload) = rest.split_first_chunk::<32>()?;
        if u64::from_le_bytes(*len) != payload.len() as u64 || Sha256::digest(payload).as_slice() != sum {
            return None;
        }
        Some(payload.to_vec())
    }

    /// Stores `payload` under `key`, atomically (temporary file, then rename). Failures are returned for
    /// callers that care; the compile command ignores them (a cache that cannot be written is a slow cache).
    pub fn store(&self, key: &Key, payload: &[u8]) -> std::io::Result<()> {
        let path = self.path(key);
        let dir = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(dir)?;
        let tmp = dir.join(format!(".{}.{}.tmp", key.to_hex(), std::process::id()));
        let write = || -> std::io::Result<()> {
            let mut file = std::fs::File::create(&tmp)?;
            file.write_all(MAGIC)?;
            file.write_all(&(payload.len() as u64).to_le_bytes())?;
            file.write_all(&Sha256::digest(payload))?;
            file.write_all(payload)?;
            std::fs::rename(&tmp, &path)
        };
        write().inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tilec-cache-unit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn key(input: &str, emit: &str) -> Key {
        KeyBuilder::for_build("test").field("input", input.as_bytes()).field("emit", emit.as_bytes()).finish()
    }

    #[test]
    fn stores_and_finds_the_same_bytes() {
        let cache = Cache::new(temp_dir("hit"));
        let k = key("x", "ptx");
        assert_eq!(cache.lookup(&k), None);
        cache.store(&k, b"payload").unwrap();
        assert_eq!(cache.lookup(&k).as_deref(), Some(b"payload".as_slice()));
        assert_eq!(cache.lookup(&key("x", "llvm")), None);
        let _ = std::fs::remove_dir_all(cache.dir());
    }

    #[test]
    fn fields_are_delimited() {
        let a = KeyBuilder::for_build("b").field("ab", b"c").finish();
        let b = KeyBuilder::for_build("b").field("a", b"bc").finish();
        assert_ne!(a, b);
        assert_ne!(KeyBuilder::for_build("1").finish(), KeyBuilder::for_build("2").finish());
    }

    #[test]
    fn damaged_entries_are_misses() {
        let cache = Cache::new(temp_dir("damaged"));
        let k = key("y", "ptx");
        cache.store(&k, b"some ptx text").unwrap();
        let path = cache.path(&k);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(cache.lookup(&k), None);
        std::fs::write(&path, &bytes[..10]).unwrap();
        assert_eq!(cache.lookup(&k), None);
        std::fs::write(&path, b"").unwrap();
        assert_eq!(cache.lookup(&k), None);
        let _ = std::fs::remove_dir_all(cache.dir());
    }
}
