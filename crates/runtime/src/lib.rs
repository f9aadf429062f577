//! The tool runtime the three binaries share: what a run of ncgen-rs, ncdump-rs or nccopy-rs
//! is made of besides the work itself.
//!
//! - [`exit`] codes and [`Failure`], an error marked with the [`Side`] it arose on (input,
//!   command line, output), which gives the exit code;
//! - the interrupt handler and the registry of temporary outputs it removes
//!   ([`install_interrupt_handler`], [`register_temp`], [`commit_unless_interrupted`]): a
//!   destination is untouched or completely replaced, never partial;
//! - process settings: the worker-thread count ([`set_threads`]), the allocator
//!   ([`tune_allocator`]), the remote I/O summary ([`report_io`]) and the `--version` text.
//!
//! It holds no format and no place: datasets are opened and created by nc-dispatch, names are
//! parsed by nc-store, the copy is nc-copy's.

mod about;
mod cleanup;
mod failure;
mod process;

pub use about::{
    exit, remote_io_line, report_io, set_threads, version_text, IO_STATS_ENV, THREADS_ENV,
};
pub use cleanup::{
    commit_unless_interrupted, install_interrupt_handler, interrupt, is_interrupted, register_temp,
    register_unnamed_temp, temps_in_flight, wait_if_interrupted, TempGuard,
};
pub use failure::{error_text, Failure, Side};
pub use process::tune_allocator;
