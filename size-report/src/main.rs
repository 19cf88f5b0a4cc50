//! size-report: what a wisp binary weighs, by section, by crate and module, by function,
//! and how much of it is message text; checked against the budget of its configuration
//! in the repository. It also refuses a binary that is not a static, non-PIE ELF, since
//! that is what wisp promises.
//!
//! usage: size-report [--budget FILE] [--config NAME] [--scale PERCENT] BINARY [SYMBOLS_BINARY]

use std::collections::BTreeMap;
use std::process::ExitCode;

mod elf;

use elf::{Elf, Symbol};

const USAGE: &str = "usage: size-report [--budget FILE] [--config NAME] [--scale PERCENT] BINARY [SYMBOLS_BINARY]";
const TOP_FUNCTIONS: usize = 25;
const TOP_MODULES: usize = 40;
const TOP_BUFFERS: usize = 8;
/// Shortest run of printable characters counted as text, as strings(1) counts.
const TEXT_RUN: usize = 4;

#[derive(Debug, PartialEq, Eq)]
struct Budget {
    /// `None`: a configuration only reported (its distance to the aim), never failed.
    ceiling: Option<u64>,
    aim: u64,
}

/// The budget of `config` in the file: lines of `CONFIGURATION CEILING AIM` in bytes (a
/// CEILING of `-`: reported, not enforced); `scale` (percent) applies to both, for another
/// architecture's build.
fn parse_budget(text: &str, config: &str, scale: u64) -> Result<Budget, String> {
    let mut found = None;
    let mut known = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [name, ceiling, aim] = fields[..] else {
            return Err(format!("budget line {}: expected CONFIGURATION CEILING AIM", number + 1));
        };
        let bytes = |value: &str| value.parse::<u64>().map_err(|_| format!("budget line {}: {value:?} is not a number of bytes", number + 1));
        let ceiling = if ceiling == "-" { None } else { Some(bytes(ceiling)?) };
        let budget = Budget { ceiling, aim: bytes(aim)? };
        if budget.ceiling.is_some_and(|ceiling| budget.aim > ceiling) {
            return Err(format!("budget line {}: the aim is above the ceiling", number + 1));
        }
        known.push(name.to_string());
        if name == config {
            found = Some(budget);
        }
    }
    let budget = found.ok_or_else(|| format!("budget: no configuration {config:?} (known: {})", known.join(", ")))?;
    Ok(Budget { ceiling: budget.ceiling.map(|ceiling| ceiling * scale / 100), aim: budget.aim * scale / 100 })
}

/// The demangled name without its hash: `wisp_core::http::parse_response`.
fn demangle(name: &str) -> String {
    format!("{:#}", rustc_demangle::demangle(name))
}

/// The path a symbol's code belongs to: the implementing type's for trait methods
/// (`<wisp::output::Message as core::fmt::Write>::write_str` is `wisp::output::Message`).
fn owner_path(demangled: &str) -> &str {
    let trimmed = demangled.trim_start_matches(['<', '&', '*']).trim_start_matches("mut ").trim_start_matches("const ");
    let end = trimmed.find([' ', '<', '>', '(', '[', ',']).unwrap_or(trimmed.len());
    &trimmed[..end]
}

/// The crate a symbol belongs to, for the rollup; the machine outliner's and the C
/// runtime's symbols are named as such.
fn crate_of(demangled: &str) -> String {
    if demangled.starts_with("OUTLINED_FUNCTION_") {
        return "(outlined by LLVM)".into();
    }
    let path = owner_path(demangled);
    match path.split_once("::") {
        Some((name, _)) if !name.is_empty() => name.to_string(),
        _ => "(no crate: runtime, entry)".into(),
    }
}

/// `crate::module` (one level of module), for the per-module rollup.
fn module_of(demangled: &str) -> String {
    if demangled.starts_with("OUTLINED_FUNCTION_") {
        return "(outlined by LLVM)".into();
    }
    let path = owner_path(demangled);
    let parts: Vec<&str> = path.split("::").collect();
    match parts.len() {
        0 | 1 => "(no crate: runtime, entry)".into(),
        // `crate::function`: the crate's root.
        2 => parts[0].to_string(),
        _ => format!("{}::{}", parts[0], parts[1]),
    }
}

/// Bytes in runs of at least `TEXT_RUN` printable ASCII characters (and line breaks):
/// what strings(1) would print of the section, which is mostly messages.
fn text_bytes(data: &[u8]) -> u64 {
    let mut total = 0;
    let mut run = 0;
    for &b in data {
        if b == b'\n' || b == b'\t' || (0x20..0x7f).contains(&b) {
            run += 1;
        } else {
            if run >= TEXT_RUN {
                total += run as u64;
            }
            run = 0;
        }
    }
    if run >= TEXT_RUN {
        total += run as u64;
    }
    total
}

#[derive(Default, Clone, Copy)]
struct Weight {
    text: u64,
    rodata: u64,
}

impl Weight {
    fn add(&mut self, section: &str, size: u64) {
        match section {
            ".text" => self.text += size,
            ".rodata" => self.rodata += size,
            _ => {}
        }
    }

    fn total(&self) -> u64 {
        self.text + self.rodata
    }
}

fn print_rollup(title: &str, rollup: BTreeMap<String, Weight>, limit: usize) {
    let mut rows: Vec<_> = rollup.into_iter().filter(|(_, w)| w.total() > 0).collect();
    rows.sort_by(|a, b| b.1.total().cmp(&a.1.total()).then_with(|| a.0.cmp(&b.0)));
    println!();
    println!("{title}:");
    println!("{:>8} {:>8} {:>8}  name", "code", "rodata", "total");
    let shown = rows.len().min(limit);
    for (name, weight) in &rows[..shown] {
        println!("{:>8} {:>8} {:>8}  {name}", weight.text, weight.rodata, weight.total());
    }
    if rows.len() > shown {
        let rest = rows[shown..].iter().fold(Weight::default(), |sum, (_, w)| Weight { text: sum.text + w.text, rodata: sum.rodata + w.rodata });
        println!("{:>8} {:>8} {:>8}  ({} more)", rest.text, rest.rodata, rest.total(), rows.len() - shown);
    }
}

fn report_symbols(symbols: &[Symbol], rodata: Option<&[u8]>, rodata_size: u64) {
    let named: Vec<(&Symbol, String)> = symbols.iter().map(|s| (s, demangle(&s.name))).collect();
    let mut by_crate: BTreeMap<String, Weight> = BTreeMap::new();
    let mut by_module: BTreeMap<String, Weight> = BTreeMap::new();
    let mut attributed_rodata = 0;
    for (symbol, name) in &named {
        by_crate.entry(crate_of(name)).or_default().add(&symbol.section, symbol.size);
        by_module.entry(module_of(name)).or_default().add(&symbol.section, symbol.size);
        if symbol.section == ".rodata" {
            attributed_rodata += symbol.size;
        }
    }
    print_rollup("code (.text) and named read-only data (.rodata) by crate", by_crate, usize::MAX);
    print_rollup("by module", by_module, TOP_MODULES);

    let mut functions: Vec<_> = named.iter().filter(|(s, _)| s.section == ".text").collect();
    functions.sort_by(|a, b| b.0.size.cmp(&a.0.size).then_with(|| a.1.cmp(&b.1)));
    println!();
    println!("{TOP_FUNCTIONS} largest functions:");
    for (symbol, name) in functions.iter().take(TOP_FUNCTIONS) {
        println!("{:>8}  {name}", symbol.size);
    }

    println!();
    let unnamed = rodata_size.saturating_sub(attributed_rodata);
    println!(".rodata: {rodata_size} bytes, {attributed_rodata} in named objects, {unnamed} in string literals and constants without a symbol");
    if let Some(data) = rodata {
        println!("message text: {} bytes of .rodata are printable text (runs of {TEXT_RUN}+ characters, as strings(1) finds them)", text_bytes(data));
    }

    let mut buffers: Vec<_> = named.iter().filter(|(s, _)| s.section == ".bss" || s.section == ".tbss").collect();
    buffers.sort_by(|a, b| b.0.size.cmp(&a.0.size).then_with(|| a.1.cmp(&b.1)));
    let total: u64 = buffers.iter().map(|(s, _)| s.size).sum();
    println!();
    println!(".bss (zeroed memory at run time, no bytes in the file): {total} bytes; largest buffers:");
    for (symbol, name) in buffers.iter().take(TOP_BUFFERS) {
        println!("{:>10}  {name}", symbol.size);
    }
}

fn report(name: &str, binary: &[u8], symbols: Option<&[u8]>, budget: &Budget) -> Result<bool, String> {
    let elf = Elf::parse(binary)?;
    elf.check_static()?;
    let total = binary.len() as u64;
    println!("wisp ({name}): {total} bytes ({:.1} KiB), static non-PIE ELF", total as f64 / 1024.0);
    println!();
    println!("{:<24} {:>10} {:>7}", "section", "bytes", "share");
    let mut rodata_size = 0;
    for section in elf.sections()? {
        if section.size == 0 || section.name.is_empty() || !section.occupies_file() {
            continue;
        }
        if section.name == ".rodata" {
            rodata_size = section.size;
        }
        println!("{:<24} {:>10} {:>6.1}%", section.name, section.size, 100.0 * section.size as f64 / total as f64);
    }
    if let Some(symbols) = symbols {
        let with_symbols = Elf::parse(symbols)?;
        report_symbols(&with_symbols.symbols()?, elf.section_contents(".rodata")?, rodata_size);
    }
    println!();
    match budget.ceiling {
        Some(ceiling) => {
            println!("budget ({name}): ceiling {ceiling} bytes, aim {} bytes", budget.aim);
            if total > ceiling {
                println!("OVER THE CEILING by {} bytes", total - ceiling);
                return Ok(false);
            }
            println!("{} bytes under the ceiling", ceiling - total);
        }
        None => println!("budget ({name}): no ceiling (reported only), aim {} bytes", budget.aim),
    }
    if total > budget.aim {
        println!("{} bytes over the aim", total - budget.aim);
    } else {
        println!("{} bytes under the aim", budget.aim - total);
    }
    Ok(true)
}

fn run(args: &[String]) -> Result<bool, String> {
    let mut budget_path = None;
    let mut config = "full".to_string();
    let mut scale = 100;
    let mut files = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--budget" => budget_path = Some(args.next().ok_or("--budget needs a FILE")?.clone()),
            "--config" => config = args.next().ok_or("--config needs a NAME")?.clone(),
            "--scale" => {
                let value = args.next().ok_or("--scale needs a PERCENT")?;
                scale = value.parse().map_err(|_| format!("--scale {value}: not a whole percentage"))?;
            }
            "--help" | "-h" => {
                println!("{USAGE}");
                return Ok(true);
            }
            option if option.starts_with('-') => return Err(format!("unknown option {option}")),
            file => files.push(file.to_string()),
        }
    }
    let (binary, symbols) = match files.as_slice() {
        [binary] => (binary, None),
        [binary, symbols] => (binary, Some(symbols)),
        _ => return Err(USAGE.into()),
    };
    let budget_path = budget_path.unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/budget").to_string());
    let budget_text = std::fs::read_to_string(&budget_path).map_err(|e| format!("{budget_path}: {e}"))?;
    let budget = parse_budget(&budget_text, &config, scale)?;
    let binary = std::fs::read(binary).map_err(|e| format!("{binary}: {e}"))?;
    let symbols = symbols.map(|path| std::fs::read(path).map_err(|e| format!("{path}: {e}"))).transpose()?;
    report(&config, &binary, symbols.as_deref(), &budget)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("size-report: {message}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_file() {
        let text = "# wisp\nfull 307200 229376  # 300 KiB\naws-only 131072 65536\neverything - 229376\n";
        assert_eq!(parse_budget(text, "full", 100).unwrap(), Budget { ceiling: Some(307_200), aim: 229_376 });
        assert_eq!(parse_budget(text, "aws-only", 110).unwrap(), Budget { ceiling: Some(144_179), aim: 72_089 });
        assert_eq!(parse_budget(text, "everything", 110).unwrap(), Budget { ceiling: None, aim: 252_313 });
        assert!(parse_budget(text, "gcp-only", 100).unwrap_err().contains("known: full, aws-only, everything"));
        assert!(parse_budget("full - x\n", "full", 100).is_err());
        assert!(parse_budget("full 10\n", "full", 100).is_err());
        assert!(parse_budget("full 10 20\n", "full", 100).is_err());
        assert!(parse_budget("full ten 1\n", "full", 100).is_err());
    }

    #[test]
    fn demangling_and_rollups() {
        assert_eq!(demangle("_ZN9wisp_core4http14parse_response17h0123456789abcdefE"), "wisp_core::http::parse_response");
        assert_eq!(demangle("memcpy"), "memcpy");
        // v0, as the precompiled standard library is mangled.
        assert_eq!(demangle("_RNvMsa_NtCsgEmfK2I1SDS_4core3fmtNtB5_9Formatter3pad"), "<core::fmt::Formatter>::pad");
        assert_eq!(crate_of("<core::fmt::Formatter>::pad"), "core");
        assert_eq!(module_of("<core::fmt::Formatter>::pad"), "core::fmt");
        assert_eq!(crate_of("wisp_core::http::parse_response"), "wisp_core");
        assert_eq!(module_of("<wisp::output::Message as core::fmt::Write>::write_str"), "wisp::output");
        assert_eq!(module_of("wisp::main"), "wisp");
        assert_eq!(crate_of("OUTLINED_FUNCTION_12"), "(outlined by LLVM)");
        assert_eq!(crate_of("origin_main"), "(no crate: runtime, entry)");
    }

    #[test]
    fn message_text_is_counted_as_strings_finds_it() {
        assert_eq!(text_bytes(b"\x01\x02abc\x00hello world\n\xff"), 12);
        assert_eq!(text_bytes(b"tail"), 4);
    }
}
