//! Kernel launches: typed launchers and the launch configuration of a 1-D
//! grid.
//!
//! Each kernel family declares its kernels with [`typed_kernels!`] next to
//! its host code, copying the parameter list of the `extern "C"` signature
//! in kernels/: the macro makes a handle type per kernel whose `launch`
//! takes exactly those parameters, in that order, with those types, so a
//! call site that passes them otherwise does not compile. The one `unsafe`
//! launch lives in the macro. Block sizes are named constants beside the
//! declarations (`*_BLOCK`).

use cudarc::driver::{CudaFunction, LaunchArgs, LaunchConfig, PushKernelArg};

use crate::error::Result;

/// A device address passed as a kernel's pointer parameter (`T*`).
pub(super) type DevPtr = u64;

/// The types a kernel parameter can have on the Rust side: `uint32_t`,
/// `uint64_t` and device pointers ([`DevPtr`]).
pub(super) trait Param {
    fn push<'a>(&'a self, b: &mut LaunchArgs<'a>);
}
impl Param for u32 {
    fn push<'a>(&'a self, b: &mut LaunchArgs<'a>) {
        b.arg(self);
    }
}
impl Param for u64 {
    fn push<'a>(&'a self, b: &mut LaunchArgs<'a>) {
        b.arg(self);
    }
}

/// Looks a kernel up by its symbol in the loaded module.
pub(super) type Lookup<'a> = dyn Fn(&'static str) -> Result<CudaFunction> + 'a;

/// Declares typed kernel handles. Each entry is
/// `Name["symbol", ...](param: Type, ...);` with the kernel's parameters in
/// order, as its `extern "C"` signature has them (a pointer is a
/// [`DevPtr`], `uint32_t` a `u32`, `uint64_t` a `u64`; the tests compare
/// the two, see `check_signatures`). One handle type serves every build
/// of a family that shares the signature (G1 / G2 / G1 inlined): with one
/// symbol the handle has `load`, with several `load_all`, one handle per
/// symbol in the order given.
///
/// `launch(dev, kernel, size, cfg, params...)` enqueues the kernel on the
/// device's stream; `kernel` and `size` name the failure in the error.
/// `launch_on(dev, stream, ...)` enqueues it on another stream of the same
/// context (a caller's upload stream).
macro_rules! typed_kernels {
    ($(
        $(#[$doc:meta])*
        $name:ident[$($sym:literal),+ $(,)?]($($arg:ident: $ty:ty),* $(,)?);
    )*) => {
    $(
        $(#[$doc])*
        pub(in crate::device) struct $name(cudarc::driver::CudaFunction);

        impl $name {
            /// The kernel's symbols, and its parameter types as declared.
            #[cfg(test)]
            pub(in crate::device) const SIGNATURE: $crate::device::launch::Signature =
                $crate::device::launch::Signature {
                    symbols: &[$($sym),+],
                    params: &[$(stringify!($ty)),*],
                };

            // dead_code: a kernel launched only on other streams
            // (`launch_on`) never uses it.
            #[allow(clippy::too_many_arguments, dead_code)]
            pub(in crate::device) fn launch(
                &self,
                dev: &$crate::device::CudaDevice,
                kernel: &'static str,
                size: usize,
                cfg: cudarc::driver::LaunchConfig,
                $($arg: $ty),*
            ) -> $crate::error::Result<()> {
                self.launch_on(dev, &dev.stream, kernel, size, cfg, $($arg),*)
            }

            /// As `launch`, on `stream` (another stream of the device's
            /// context) instead of the device's own; few kernels need it
            /// (dead_code: most never do).
            #[allow(clippy::too_many_arguments, dead_code)]
            pub(in crate::device) fn launch_on(
                &self,
                dev: &$crate::device::CudaDevice,
                stream: &cudarc::driver::CudaStream,
                kernel: &'static str,
                size: usize,
                cfg: cudarc::driver::LaunchConfig,
                $($arg: $ty),*
            ) -> $crate::error::Result<()> {
                let mut b = stream.launch_builder(&self.0);
                $($crate::device::launch::Param::push(&$arg, &mut b);)*
                // SAFETY: the parameters pushed are the kernel's, in order,
                // with its types (this declaration copies its signature, a
                // test compares the two, and the compiler holds every call
                // to the declaration); the caller sizes the grid so that the
                // kernel's own bounds checks keep every access inside the
                // buffers passed.
                unsafe { b.launch(cfg) }
                    .map_err(|e| dev.err("launch", kernel, size, e))?;
                Ok(())
            }
        }

        $crate::device::launch::typed_kernels!(@load $name $($sym),+);
    )*
        /// Every kernel this module declares (one `typed_kernels!` a
        /// module), so that the signature test can tell whether it checks
        /// them all.
        #[cfg(test)]
        pub(in crate::device) const SIGNATURES: &[$crate::device::launch::Signature] =
            &[$($name::SIGNATURE),*];
    };
    (@load $name:ident $sym:literal) => {
        impl $name {
            pub(in crate::device) fn load(
                lookup: &$crate::device::launch::Lookup<'_>,
            ) -> $crate::error::Result<Self> {
                lookup($sym).map($name)
            }
        }
    };
    (@load $name:ident $($sym:literal),+) => {
        impl $name {
            pub(in crate::device) fn load_all(
                lookup: &$crate::device::launch::Lookup<'_>,
            ) -> $crate::error::Result<[Self; [$($sym),+].len()]> {
                Ok([$(lookup($sym).map($name)?),+])
            }
        }
    };
}
pub(super) use typed_kernels;

/// A 1-D grid of `block`-thread blocks covering `threads` threads (at least
/// one block).
pub(super) fn cfg1d(threads: usize, block: u32) -> LaunchConfig {
    let blocks = threads.div_ceil(block as usize).max(1) as u32;
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// A kernel's symbols and its declared parameter types (`DevPtr`, `u32`,
/// `u64`), for [`check_signatures`].
#[cfg(test)]
pub(super) struct Signature {
    pub symbols: &'static [&'static str],
    pub params: &'static [&'static str],
}

/// Checks each declaration against the `extern "C" __global__` kernels of
/// `source` (a kernel header's text): every symbol is defined there, with
/// the declared parameter types in order. Kernels that a macro defines
/// (`NAME(...)` in `#define NTT_PASS(NAME, ...)`, `msm_accumulate_##G`) are
/// matched through the macro that holds the definition: `NAME` when that
/// macro is instantiated with the symbol as its first argument,
/// `prefix##G` when the symbol is `prefix` followed by such a first
/// argument.
#[cfg(test)]
pub(super) fn check_signatures(source: &str, kernels: &[Signature]) {
    let defs = kernel_definitions(&source.replace("\\\n", "\n"));
    for k in kernels {
        for &sym in k.symbols {
            let found: Vec<&Vec<&'static str>> = defs
                .iter()
                .filter(|d| defines(&d.name, d.in_macro.as_deref(), sym, source))
                .map(|d| &d.params)
                .collect();
            assert!(!found.is_empty(), "{sym}: no such kernel in the source");
            for params in found {
                assert_eq!(params.as_slice(), k.params, "{sym}: parameters differ");
            }
        }
    }
}

/// Whether the definition named `name` (maybe a macro's `NAME` or
/// `prefix##G`, in the macro `in_macro`) defines the kernel `sym`.
#[cfg(test)]
fn defines(name: &str, in_macro: Option<&str>, sym: &str, source: &str) -> bool {
    let m = in_macro.unwrap_or("");
    let instantiated = |arg: &str| {
        source.contains(&format!("{m}({arg},")) || source.contains(&format!("{m}({arg})"))
    };
    if let Some((prefix, _)) = name.split_once("##") {
        return sym.strip_prefix(prefix).is_some_and(instantiated);
    }
    let macro_param = name.chars().all(|c| c.is_ascii_uppercase() || c == '_');
    name == sym || (macro_param && instantiated(sym))
}

/// A `__global__` definition of a kernel header.
#[cfg(test)]
struct KernelDefinition {
    name: String,
    params: Vec<&'static str>,
    /// The last macro `#define`d before it: the one whose body holds it
    /// when its name is a macro parameter.
    in_macro: Option<String>,
}

/// Each `__global__` definition in `source` (macro bodies' continuations
/// joined).
#[cfg(test)]
fn kernel_definitions(source: &str) -> Vec<KernelDefinition> {
    let mut out = Vec::new();
    let mut at = 0;
    for part in source.split("__global__") {
        let before = &source[..at];
        at += part.len() + "__global__".len();
        if before.is_empty() {
            continue; // the text before the first definition
        }
        let in_macro = before.rfind("#define ").map(|i| {
            before[i + "#define ".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        });
        let rest = part.trim_start();
        let Some(rest) = rest.strip_prefix("void") else {
            continue;
        };
        let mut rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("__launch_bounds__") {
            rest = r[r.find(')').expect("__launch_bounds__(...)") + 1..].trim_start();
        }
        // A macro that stands for the bounds (an upper-case word before
        // the name, `void BOUNDS name(`).
        let word = rest
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(0);
        if word > 0 && rest[word..].starts_with(char::is_whitespace) {
            rest = rest[word..].trim_start();
        }
        let open = rest.find('(').expect("a parameter list");
        let name = rest[..open].trim().to_string();
        let close = rest.find(')').expect("a parameter list");
        let params = rest[open + 1..close]
            .split(',')
            .map(|p| {
                if p.contains('*') {
                    "DevPtr"
                } else if p.contains("uint32_t") {
                    "u32"
                } else if p.contains("uint64_t") {
                    "u64"
                } else {
                    "?"
                }
            })
            .collect();
        out.push(KernelDefinition {
            name,
            params,
            in_macro,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "extern \"C\" __global__ void __launch_bounds__(256)\n\
        plain(const uint32_t* a, uint32_t n, uint64_t m) {}\n\
        #define PAIR(G, F) \\\n\
            extern \"C\" __global__ void pair_##G(const F* x, uint32_t n) {}\n\
        PAIR(g1, Fq)\n\
        #define CAPPED __launch_bounds__(128, 3)\n\
        extern \"C\" __global__ void CAPPED\n    capped(const uint32_t* a, uint32_t n) {}\n\
        #define ONE(NAME) extern \"C\" __global__ void NAME(uint32_t n) {}\n\
        #define TWO(NAME) extern \"C\" __global__ void NAME(uint32_t n, uint32_t m) {}\n\
        ONE(one_a)\n\
        TWO(two_a)\n";

    #[test]
    fn signatures_match_plain_and_macro_kernels() {
        check_signatures(
            SOURCE,
            &[
                Signature {
                    symbols: &["plain"],
                    params: &["DevPtr", "u32", "u64"],
                },
                Signature {
                    symbols: &["pair_g1"],
                    params: &["DevPtr", "u32"],
                },
                Signature {
                    symbols: &["capped"],
                    params: &["DevPtr", "u32"],
                },
            ],
        );
    }

    /// Two macros naming their kernel by a parameter: each symbol is
    /// checked against the macro that it instantiates, not the other.
    #[test]
    fn each_macro_kernel_is_matched_through_its_own_macro() {
        check_signatures(
            SOURCE,
            &[
                Signature {
                    symbols: &["one_a"],
                    params: &["u32"],
                },
                Signature {
                    symbols: &["two_a"],
                    params: &["u32", "u32"],
                },
            ],
        );
    }

    #[test]
    #[should_panic(expected = "two_a: parameters differ")]
    fn a_macro_kernel_with_the_other_macros_parameters_is_caught() {
        check_signatures(
            SOURCE,
            &[Signature {
                symbols: &["two_a"],
                params: &["u32"],
            }],
        );
    }

    #[test]
    #[should_panic(expected = "plain: parameters differ")]
    fn a_wrong_parameter_type_is_caught() {
        check_signatures(
            SOURCE,
            &[Signature {
                symbols: &["plain"],
                params: &["DevPtr", "u32", "u32"],
            }],
        );
    }

    #[test]
    #[should_panic(expected = "pair_g2: no such kernel")]
    fn a_build_the_source_lacks_is_caught() {
        check_signatures(
            SOURCE,
            &[Signature {
                symbols: &["pair_g2"],
                params: &["DevPtr", "u32"],
            }],
        );
    }
}
