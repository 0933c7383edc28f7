//! Size of an adapter binary as loaded: the sum of its ELF PT_LOAD segments
//! (code and data), which unlike the file size does not depend on debug info
//! (release builds keep line tables for callgrind).

use std::path::Path;

use anyhow::{ensure, Context, Result};

const PT_LOAD: u32 = 1;

pub fn loaded_bytes(path: &Path) -> Result<u64> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    loaded_bytes_of(&bytes).with_context(|| format!("{} is not a 64-bit little-endian ELF file", path.display()))
}

fn loaded_bytes_of(elf: &[u8]) -> Result<u64> {
    ensure!(elf.len() >= 64 && elf[..4] == *b"\x7fELF", "no ELF header");
    ensure!(elf[4] == 2 && elf[5] == 1, "not ELF64 little endian");
    let u16_at = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]) as usize;
    let u32_at = |o: usize| u32::from_le_bytes(elf[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap());
    let (phoff, phentsize, phnum) = (u64_at(0x20) as usize, u16_at(0x36), u16_at(0x38));
    ensure!(phentsize >= 56, "program header entries too small");
    ensure!(
        phoff.checked_add(phentsize * phnum).is_some_and(|end| end <= elf.len()),
        "program headers beyond the end of the file"
    );
    Ok((0..phnum)
        .map(|i| phoff + i * phentsize)
        .filter(|&h| u32_at(h) == PT_LOAD)
        .map(|h| u64_at(h + 0x20)) // p_filesz
        .sum())
}

#[cfg(test)]
mod tests {
    #[test]
    fn own_binary_is_loaded_smaller_than_its_file() {
        let me = std::env::current_exe().unwrap();
        let loaded = super::loaded_bytes(&me).unwrap();
        let file = std::fs::metadata(&me).unwrap().len();
        assert!(loaded > 100_000 && loaded <= file, "loaded {loaded}, file {file}");
    }

    #[test]
    fn non_elf_is_refused() {
        assert!(super::loaded_bytes_of(b"#!/bin/sh\necho hi\n").is_err());
        let mut truncated = vec![0u8; 64];
        truncated[..6].copy_from_slice(b"\x7fELF\x02\x01");
        truncated[0x20] = 0xff; // phoff far beyond the end
        truncated[0x36] = 56;
        truncated[0x38] = 1;
        assert!(super::loaded_bytes_of(&truncated).is_err());
    }
}
