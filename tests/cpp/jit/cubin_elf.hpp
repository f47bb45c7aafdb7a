// Reading a cubin (the ELF64 image NVRTC writes) without a GPU: its sections' sizes, and the
// per-kernel facts ptxas records in the `.nv.info` section. Shared by the tests that hold a
// family's declarations and its kernels' code against the compiled image.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>

namespace rt_test {

template <class T> T read_at(const std::string &image, std::uint64_t offset) {
  if (offset + sizeof(T) > image.size())
    throw std::runtime_error("the cubin ends inside an ELF structure");
  T value;
  std::memcpy(&value, image.data() + offset, sizeof(T)); // ELF64, little-endian, as CUDA emits
  return value;
}

struct elf_section {
  std::uint64_t offset = 0, size = 0;
};

// {section name: where it lies} of an ELF64 image. `.nv.shared.<kernel>` is a NOBITS section
// whose size is that kernel's static shared memory.
inline std::map<std::string, elf_section> elf_sections(const std::string &image) {
  if (image.compare(0, 4,
                    "\x7f"
                    "ELF") != 0 ||
      read_at<std::uint8_t>(image, 4) != 2)
    throw std::runtime_error("not an ELF64 image");
  const auto shoff = read_at<std::uint64_t>(image, 0x28);
  const auto shentsize = read_at<std::uint16_t>(image, 0x3a);
  const auto shnum = read_at<std::uint16_t>(image, 0x3c);
  const auto shstrndx = read_at<std::uint16_t>(image, 0x3e);
  auto header = [&](std::uint64_t i) { return shoff + i * shentsize; };
  const auto names_at = read_at<std::uint64_t>(image, header(shstrndx) + 0x18); // sh_offset
  std::map<std::string, elf_section> out;
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const auto name_offset = names_at + read_at<std::uint32_t>(image, header(i)); // sh_name
    if (name_offset >= image.size())
      throw std::runtime_error("a section name lies outside the cubin");
    const std::string name(image.c_str() + name_offset);
    out[name] = {read_at<std::uint64_t>(image, header(i) + 0x18),  // sh_offset
                 read_at<std::uint64_t>(image, header(i) + 0x20)}; // sh_size
  }
  return out;
}

// {kernel symbol name: value} of one per-kernel `.nv.info` attribute whose entries (format
// 0x04, sized, 8 bytes) hold a symbol index and a 32-bit value.
inline std::map<std::string, std::uint32_t> kernel_info(const std::string &image,
                                                        std::uint8_t wanted) {
  const auto sections = elf_sections(image);
  const auto info = sections.find(".nv.info");
  const auto symtab = sections.find(".symtab");
  const auto strtab = sections.find(".strtab");
  if (info == sections.end() || symtab == sections.end() || strtab == sections.end())
    throw std::runtime_error("the cubin has no .nv.info, .symtab or .strtab");
  auto symbol_name = [&](std::uint32_t index) {
    const std::uint64_t entry = symtab->second.offset + index * 24ull; // Elf64_Sym
    const auto name_offset = strtab->second.offset + read_at<std::uint32_t>(image, entry);
    if (name_offset >= image.size()) throw std::runtime_error("a symbol name lies outside");
    return std::string(image.c_str() + name_offset);
  };
  constexpr std::uint8_t format_sized = 0x04;
  std::map<std::string, std::uint32_t> out;
  for (std::uint64_t at = info->second.offset, end = at + info->second.size; at + 4 <= end;) {
    const auto format = read_at<std::uint8_t>(image, at);
    const auto attribute = read_at<std::uint8_t>(image, at + 1);
    if (format != format_sized) throw std::runtime_error(".nv.info holds an unsized attribute");
    const auto size = read_at<std::uint16_t>(image, at + 2);
    if (attribute == wanted && size == 8)
      out[symbol_name(read_at<std::uint32_t>(image, at + 4))] =
          read_at<std::uint32_t>(image, at + 8);
    at += 4 + size;
  }
  return out;
}

// {kernel symbol name: local memory bytes per thread}: EIATTR_FRAME_SIZE (0x11), each kernel's
// stack frame: local arrays indexed at run time and register spills (what `ptxas -v` prints as
// "bytes stack frame"; 0 for a kernel that keeps everything in registers). Checked against
// ptxas -v on sm_90 for a kernel with and one without a local array.
inline std::map<std::string, std::uint32_t> kernel_frame_bytes(const std::string &image) {
  return kernel_info(image, 0x11);
}

// {kernel symbol name: registers a thread}: EIATTR_REGCOUNT (0x2f), what `ptxas -v` prints as
// "Used N registers" (scripts/axis-waves reads the same entries).
inline std::map<std::string, std::uint32_t> kernel_registers(const std::string &image) {
  return kernel_info(image, 0x2f);
}

} // namespace rt_test
