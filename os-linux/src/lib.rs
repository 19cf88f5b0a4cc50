//! wisp's system calls. Each function wraps one call (or one short, fixed sequence of
//! calls) through rustix, says which man page describes it, and hides nothing else.
#![no_std]

pub mod block;
