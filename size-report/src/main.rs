//! size-report: what the wisp binary weighs, by section, by symbol and by crate, checked
//! against the budget in the repository. It also refuses a binary that is not a static,
//! non-PIE ELF, since that is what wisp promises.
//!
//! usage: size-report [--budget FILE] BINARY [SYMBOLS_BINARY]

use std::collections::BTreeMap;
use std::process::ExitCode;

mod elf;

use elf::Elf;

const TOP_SYMBOLS: usize = 20;

struct Budget {
    ceiling: u64,
    aim: u64,
}

fn parse_budget(text: &str) -> Result<Budget, String> {
    let mut ceiling = None;
    let mut aim = None;
    for (number, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (key, value) = line.split_once(char::is_whitespace).ok_or(format!("budget line {}: expected KEY BYTES", number + 1))?;
        let value: u64 = value.trim().parse().map_err(|_| format!("budget line {}: {value:?} is not a number of bytes", number + 1))?;
        match key {
            "ceiling" => ceiling = Some(value),
            "aim" => aim = Some(value),
            other => return Err(format!("budget line {}: unknown key {other:?}", number + 1)),
        }
    }
    let budget = Budget { ceiling: ceiling.ok_or("budget: no ceiling")?, aim: aim.ok_or("budget: no aim")? };
    if budget.aim > budget.ceiling {
        return Err("budget: the aim is above the ceiling".into());
    }
    Ok(budget)
}

/// `_ZN4wisp4core4http5parse17h0123456789abcdefE` -> `wisp::core::http::parse`; the
/// v0 scheme (`_R...`, used by the precompiled standard library) is reduced to its
/// identifiers, which is what a size review needs.
fn demangle(name: &str) -> String {
    if let Some(v0) = name.strip_prefix("_R") {
        return demangle_v0_identifiers(v0).unwrap_or_else(|| name.to_string());
    }
    let Some(mut rest) = name.strip_prefix("_ZN") else { return name.to_string() };
    let mut parts = Vec::new();
    while let Some(digits_end) = rest.find(|c: char| !c.is_ascii_digit()) {
        if digits_end == 0 {
            break;
        }
        let Ok(len) = rest[..digits_end].parse::<usize>() else { break };
        let Some(part) = rest.get(digits_end..digits_end + len) else { break };
        rest = &rest[digits_end + len..];
        if part.len() == 17 && part.starts_with('h') && part[1..].chars().all(|c| c.is_ascii_hexdigit()) {
            continue;
        }
        parts.push(part.replace("$LT$", "<").replace("$GT$", ">").replace("$u20$", " ").replace("..", "::").replace("$RF$", "&").replace("$C$", ",").replace("$u7b$", "{").replace("$u7d$", "}"));
    }
    if parts.is_empty() { name.to_string() } else { parts.join("::") }
}

/// The length-prefixed identifiers of a v0 name, skipping crate hashes (`Cs<hash>_`) and
/// back-references (`B<n>_`).
fn demangle_v0_identifiers(mut rest: &str) -> Option<String> {
    let mut parts = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("Cs").or_else(|| rest.strip_prefix('B')) {
            rest = &after[after.find('_')? + 1..];
            continue;
        }
        let first = rest.chars().next()?;
        if !first.is_ascii_digit() || first == '0' {
            rest = &rest[first.len_utf8()..];
            continue;
        }
        let digits_end = rest.find(|c: char| !c.is_ascii_digit())?;
        let len: usize = rest[..digits_end].parse().ok()?;
        let body = rest.get(digits_end..)?;
        let body = body.strip_prefix('_').unwrap_or(body);
        parts.push(body.get(..len)?.to_string());
        rest = &body[len..];
    }
    (!parts.is_empty()).then(|| parts.join("::"))
}

/// The crate a symbol belongs to, for the rollup.
fn crate_of(demangled: &str) -> String {
    let trimmed = demangled.trim_start_matches('<').trim_start_matches('&');
    let first = trimmed.split("::").next().unwrap_or(trimmed);
    match first {
        "" => "(unnamed)".into(),
        name if name.starts_with("_") || name.contains('.') => "(other)".into(),
        name => name.to_string(),
    }
}

fn report(binary: &[u8], symbols: Option<&[u8]>, budget: &Budget) -> Result<bool, String> {
    let elf = Elf::parse(binary)?;
    elf.check_static()?;
    let total = binary.len() as u64;
    println!("wisp binary: {total} bytes ({:.1} KiB), static non-PIE ELF", total as f64 / 1024.0);
    println!();
    println!("{:<24} {:>10} {:>7}", "section", "bytes", "share");
    for section in elf.sections()? {
        if section.size == 0 || section.name.is_empty() || !section.occupies_file() {
            continue;
        }
        println!("{:<24} {:>10} {:>6.1}%", section.name, section.size, 100.0 * section.size as f64 / total as f64);
    }
    if let Some(symbols) = symbols {
        let elf = Elf::parse(symbols)?;
        let mut all: Vec<(u64, String)> = elf.function_and_object_symbols()?.into_iter().map(|(size, name)| (size, demangle(&name))).collect();
        all.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        println!();
        println!("{TOP_SYMBOLS} largest symbols (from the build that keeps them):");
        for (size, name) in all.iter().take(TOP_SYMBOLS) {
            println!("{size:>8}  {name}");
        }
        let mut by_crate: BTreeMap<String, u64> = BTreeMap::new();
        for (size, name) in &all {
            *by_crate.entry(crate_of(name)).or_default() += size;
        }
        let mut by_crate: Vec<_> = by_crate.into_iter().collect();
        by_crate.sort_by_key(|entry| std::cmp::Reverse(entry.1));
        println!();
        println!("by crate:");
        for (name, size) in by_crate {
            println!("{size:>8}  {name}");
        }
    }
    println!();
    println!("budget: ceiling {} bytes, aim {} bytes", budget.ceiling, budget.aim);
    if total > budget.ceiling {
        println!("OVER THE CEILING by {} bytes", total - budget.ceiling);
        return Ok(false);
    }
    println!("{} bytes under the ceiling", budget.ceiling - total);
    if total > budget.aim {
        println!("WARNING: {} bytes over the aim", total - budget.aim);
    } else {
        println!("{} bytes under the aim", budget.aim - total);
    }
    Ok(true)
}

fn run(args: &[String]) -> Result<bool, String> {
    let mut budget_path = None;
    let mut files = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--budget" => budget_path = Some(args.next().ok_or("--budget needs a FILE")?.clone()),
            "--help" | "-h" => {
                println!("usage: size-report [--budget FILE] BINARY [SYMBOLS_BINARY]");
                return Ok(true);
            }
            option if option.starts_with('-') => return Err(format!("unknown option {option}")),
            file => files.push(file.to_string()),
        }
    }
    let (binary, symbols) = match files.as_slice() {
        [binary] => (binary, None),
        [binary, symbols] => (binary, Some(symbols)),
        _ => return Err("usage: size-report [--budget FILE] BINARY [SYMBOLS_BINARY]".into()),
    };
    let budget_path = budget_path.unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/budget").to_string());
    let budget_text = std::fs::read_to_string(&budget_path).map_err(|e| format!("{budget_path}: {e}"))?;
    let budget = parse_budget(&budget_text)?;
    let binary = std::fs::read(binary).map_err(|e| format!("{binary}: {e}"))?;
    let symbols = symbols.map(|path| std::fs::read(path).map_err(|e| format!("{path}: {e}"))).transpose()?;
    report(&binary, symbols.as_deref(), &budget)
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
        let budget = parse_budget("# wisp\nceiling 307200  # 300 KiB\naim 65536\n").unwrap();
        assert_eq!((budget.ceiling, budget.aim), (307_200, 65_536));
        assert!(parse_budget("ceiling 10\n").is_err());
        assert!(parse_budget("ceiling 10\naim 20\n").is_err());
        assert!(parse_budget("ceiling ten\naim 1\n").is_err());
        assert!(parse_budget("floor 1\n").is_err());
    }

    #[test]
    fn demangling() {
        assert_eq!(demangle("_ZN9wisp_core4http14parse_response17h0123456789abcdefE"), "wisp_core::http::parse_response");
        assert_eq!(demangle("_ZN4core3fmt5write17h0123456789abcdefE"), "core::fmt::write");
        assert_eq!(demangle("memcpy"), "memcpy");
        assert_eq!(demangle("_RNvMsa_NtCsgEmfK2I1SDS_4core3fmtNtB5_9Formatter3pad"), "core::fmt::Formatter::pad");
        assert_eq!(crate_of("wisp_core::http::parse_response"), "wisp_core");
        assert_eq!(crate_of("<wisp::output::Line as core::fmt::Write>::write_str"), "wisp");
    }
}
