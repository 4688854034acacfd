"""Just enough of ELF64 to read an object file's sections, symbols and relocations: the host objects
nvcc writes and the device code (.cubin) it keeps, both little-endian ELF64. Standard library only, so
the grader needs no binutils to read them."""
import struct

SHT_SYMTAB = 2
SHT_RELA = 4
SHN_UNDEF = 0
STB_LOCAL, STB_GLOBAL, STB_WEAK = 0, 1, 2
STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_SECTION = 0, 1, 2, 3
STT_GNU_IFUNC = 10
SHF_EXECINSTR = 0x4


class ElfError(ValueError):
    pass


class Section:
    def __init__(self, index, name, kind, flags, offset, size, link, info, entsize):
        self.index, self.name, self.kind, self.flags = index, name, kind, flags
        self.offset, self.size, self.link, self.info, self.entsize = offset, size, link, info, entsize


class Symbol:
    def __init__(self, name, bind, kind, section, value, size):
        self.name, self.bind, self.kind, self.section, self.value, self.size = name, bind, kind, section, value, size

    @property
    def undefined(self):
        return self.section == SHN_UNDEF and self.kind != STT_SECTION and bool(self.name)


class Elf:
    """An ELF64 little-endian object: .sections (by index), .symbols (the symbol table's, in order)."""

    def __init__(self, data):
        if data[:4] != b"\x7fELF" or len(data) < 64:
            raise ElfError("not an ELF file")
        if data[4] != 2 or data[5] != 1:
            raise ElfError("not a little-endian ELF64 file")
        self.data = data
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        if shoff + shnum * shentsize > len(data) or (shnum and shentsize < 64):
            raise ElfError("section headers past the end of the file")
        raw = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        names = raw[shstrndx] if shstrndx < shnum else None
        self.sections = []
        for i, (name, kind, flags, _, offset, size, link, info, _, entsize) in enumerate(raw):
            label = self._string(names[4], names[5], name) if names else ""
            self.sections.append(Section(i, label, kind, flags, offset, size, link, info, entsize))
        tables = [s.index for s in self.sections if s.kind == SHT_SYMTAB]
        self._symtab = tables[0] if tables else None
        self.symbols = self._symbols_of(self._symtab) if tables else []

    def _string(self, offset, size, at):
        if at >= size:
            return ""
        end = self.data.find(b"\0", offset + at, offset + size)
        return self.data[offset + at:end if end >= 0 else offset + size].decode("utf-8", "replace")

    def section_named(self, name):
        for s in self.sections:
            if s.name == name:
                return s
        return None

    def relocations(self, section):
        """(offset, symbol, addend) of each relocation that applies to section."""
        found = []
        for rela in self.sections:
            if rela.kind != SHT_RELA or rela.info != section.index:
                continue
            symbols = self.symbols if rela.link == self._symtab else self._symbols_of(rela.link)
            for at in range(rela.offset, rela.offset + rela.size, 24):
                offset, info, addend = struct.unpack_from("<QQq", self.data, at)
                index = info >> 32
                found.append((offset, symbols[index] if index < len(symbols) else None, addend))
        return found

    def _symbols_of(self, table_index):
        table = self.sections[table_index]
        strings = self.sections[table.link]
        symbols = []
        for at in range(table.offset, table.offset + table.size, 24):
            name, info, _, shndx, value, size = struct.unpack_from("<IBBHQQ", self.data, at)
            symbols.append(Symbol(self._string(strings.offset, strings.size, name), info >> 4, info & 0xF,
                                  shndx, value, size))
        return symbols

    def function_at(self, section_index, value):
        """The named function symbol defined at value in a section, or None."""
        for s in self.symbols:
            if s.section == section_index and s.value == value and s.kind in (STT_FUNC, STT_GNU_IFUNC) and s.name:
                return s
        return None


def read(path):
    with open(path, "rb") as f:
        return Elf(f.read())
