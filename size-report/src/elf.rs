//! Just enough of ELF64 (little-endian) to size a binary: its header, program headers,
//! sections and symbols, every offset checked against the file's length.

pub struct Elf<'a> {
    data: &'a [u8],
}

pub struct Section<'a> {
    pub name: &'a str,
    pub size: u64,
    kind: u32,
}

impl Section<'_> {
    /// SHT_NOBITS (.bss) takes memory, not file bytes.
    pub fn occupies_file(&self) -> bool {
        self.kind != SHT_NOBITS
    }
}

pub struct Symbol {
    pub size: u64,
    /// As the symbol table has it (mangled).
    pub name: String,
    /// The name of the section it is in (`.text`, `.rodata`, `.bss`...).
    pub section: String,
}

struct RawSection {
    name: u32,
    kind: u32,
    offset: u64,
    size: u64,
    link: u32,
    entry_size: u64,
}

const ET_EXEC: u16 = 2;
const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const SHT_SYMTAB: u32 = 2;
const SHT_NOBITS: u32 = 8;
const STT_OBJECT: u8 = 1;
const STT_FUNC: u8 = 2;

impl<'a> Elf<'a> {
    pub fn parse(data: &'a [u8]) -> Result<Elf<'a>, String> {
        if data.len() < 64 || &data[..4] != b"\x7fELF" {
            return Err("not an ELF file".into());
        }
        if data[4] != 2 || data[5] != 1 {
            return Err("not a 64-bit little-endian ELF".into());
        }
        Ok(Elf { data })
    }

    fn bytes(&self, offset: u64, len: u64) -> Result<&'a [u8], String> {
        let start = usize::try_from(offset).map_err(|_| "offset out of range")?;
        let len = usize::try_from(len).map_err(|_| "length out of range")?;
        self.data.get(start..start.checked_add(len).ok_or("length out of range")?).ok_or_else(|| format!("ELF field points past the end of the file (offset {offset}, {len} bytes)"))
    }

    fn u16_at(&self, offset: u64) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.bytes(offset, 2)?.try_into().unwrap()))
    }

    fn u32_at(&self, offset: u64) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.bytes(offset, 4)?.try_into().unwrap()))
    }

    fn u64_at(&self, offset: u64) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.bytes(offset, 8)?.try_into().unwrap()))
    }

    /// ET_EXEC (not PIE), no PT_INTERP, no PT_DYNAMIC: nothing for a loader to do.
    pub fn check_static(&self) -> Result<(), String> {
        if self.u16_at(16)? != ET_EXEC {
            return Err("not ET_EXEC: the binary is position-independent or not an executable".into());
        }
        let (offset, entry_size, count) = (self.u64_at(32)?, self.u16_at(54)?, self.u16_at(56)?);
        for i in 0..u64::from(count) {
            match self.u32_at(offset + i * u64::from(entry_size))? {
                PT_INTERP => return Err("the binary has an interpreter (PT_INTERP): it is dynamically linked".into()),
                PT_DYNAMIC => return Err("the binary has a dynamic section (PT_DYNAMIC)".into()),
                _ => {}
            }
        }
        Ok(())
    }

    fn raw_sections(&self) -> Result<Vec<RawSection>, String> {
        let (offset, entry_size, count) = (self.u64_at(40)?, self.u16_at(58)?, self.u16_at(60)?);
        (0..u64::from(count))
            .map(|i| {
                let at = offset + i * u64::from(entry_size);
                Ok(RawSection {
                    name: self.u32_at(at)?,
                    kind: self.u32_at(at + 4)?,
                    offset: self.u64_at(at + 24)?,
                    size: self.u64_at(at + 32)?,
                    link: self.u32_at(at + 40)?,
                    entry_size: self.u64_at(at + 56)?,
                })
            })
            .collect()
    }

    fn string(&self, table: &RawSection, index: u32) -> Result<&'a str, String> {
        let strings = self.bytes(table.offset, table.size)?;
        let start = index as usize;
        let tail = strings.get(start..).ok_or("string index out of range")?;
        let end = tail.iter().position(|&b| b == 0).ok_or("unterminated string")?;
        std::str::from_utf8(&tail[..end]).map_err(|_| "string is not UTF-8".into())
    }

    pub fn sections(&self) -> Result<Vec<Section<'a>>, String> {
        let sections = self.raw_sections()?;
        let names_index = self.u16_at(62)? as usize;
        let names = sections.get(names_index).ok_or("no section name table")?;
        sections.iter().map(|s| Ok(Section { name: self.string(names, s.name)?, size: s.size, kind: s.kind })).collect()
    }

    /// The contents of the section named `name`, if it has file bytes.
    pub fn section_contents(&self, name: &str) -> Result<Option<&'a [u8]>, String> {
        let sections = self.raw_sections()?;
        let names = sections.get(self.u16_at(62)? as usize).ok_or("no section name table")?;
        for section in &sections {
            if self.string(names, section.name)? == name && section.kind != SHT_NOBITS {
                return self.bytes(section.offset, section.size).map(Some);
            }
        }
        Ok(None)
    }

    /// Every function and object symbol with its size and the section it is in.
    pub fn symbols(&self) -> Result<Vec<Symbol>, String> {
        let sections = self.sections()?;
        let raw = self.raw_sections()?;
        let symtab = raw.iter().find(|s| s.kind == SHT_SYMTAB).ok_or("no symbol table: pass the build that keeps symbols")?;
        let strtab = raw.get(symtab.link as usize).ok_or("symbol table names no string table")?;
        let entry_size = symtab.entry_size.max(24);
        let mut out = Vec::new();
        for i in 0..symtab.size / entry_size {
            let at = symtab.offset + i * entry_size;
            let kind = self.bytes(at + 4, 1)?[0] & 0xf;
            let size = self.u64_at(at + 16)?;
            if size > 0 && (kind == STT_FUNC || kind == STT_OBJECT) {
                let section = sections.get(self.u16_at(at + 6)? as usize).map_or("", |s| s.name).to_string();
                out.push(Symbol { size, name: self.string(strtab, self.u32_at(at)?)?.to_string(), section });
            }
        }
        Ok(out)
    }

    /// (size, mangled name) of every function and object symbol.
    #[cfg(test)]
    pub fn function_and_object_symbols(&self) -> Result<Vec<(u64, String)>, String> {
        Ok(self.symbols()?.into_iter().map(|symbol| (symbol.size, symbol.name)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 header with `count` program headers of the given types.
    fn image(e_type: u16, program_types: &[u32]) -> Vec<u8> {
        let mut data = vec![0u8; 64 + 56 * program_types.len()];
        data[..4].copy_from_slice(b"\x7fELF");
        data[4] = 2;
        data[5] = 1;
        data[16..18].copy_from_slice(&e_type.to_le_bytes());
        data[32..40].copy_from_slice(&64u64.to_le_bytes());
        data[54..56].copy_from_slice(&56u16.to_le_bytes());
        data[56..58].copy_from_slice(&(program_types.len() as u16).to_le_bytes());
        for (i, kind) in program_types.iter().enumerate() {
            data[64 + 56 * i..68 + 56 * i].copy_from_slice(&kind.to_le_bytes());
        }
        data
    }

    #[test]
    fn static_checks() {
        assert!(Elf::parse(&image(ET_EXEC, &[1, 1])).unwrap().check_static().is_ok());
        assert!(Elf::parse(&image(3, &[1])).unwrap().check_static().unwrap_err().contains("position-independent"));
        assert!(Elf::parse(&image(ET_EXEC, &[1, PT_INTERP])).unwrap().check_static().unwrap_err().contains("interpreter"));
        assert!(Elf::parse(&image(ET_EXEC, &[PT_DYNAMIC])).unwrap().check_static().unwrap_err().contains("dynamic"));
    }

    #[test]
    fn garbage_is_refused_not_panicked_on() {
        assert!(Elf::parse(b"#!/bin/sh\n").is_err());
        let mut truncated = image(ET_EXEC, &[1]);
        truncated[56] = 200;
        assert!(Elf::parse(&truncated).unwrap().check_static().unwrap_err().contains("past the end"));
        let no_sections = image(ET_EXEC, &[]);
        assert!(Elf::parse(&no_sections).unwrap().sections().is_err());
    }

    #[test]
    fn reads_a_real_binary() {
        // This test binary itself is an ELF with sections and symbols.
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let elf = Elf::parse(&me).unwrap();
        let sections = elf.sections().unwrap();
        assert!(sections.iter().any(|s| s.name == ".text" && s.size > 0));
        let symbols = elf.function_and_object_symbols().unwrap();
        assert!(symbols.iter().any(|(_, name)| name.contains("reads_a_real_binary")));
    }
}
