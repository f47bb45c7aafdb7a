// The move and release logic of every CUDA owner in cuda/ (event, stream, buffers), written once:
// a move-only owner of one handle that calls `Release` on it when the owner dies. Release must
// not throw: destructors report through RT_CUDA_CALL_NOEXCEPT (errors.hpp).
#pragma once

#include <utility>

namespace reducetune {

template <typename Handle, void (*Release)(Handle) noexcept> class owned_handle {
public:
  owned_handle() = default;
  ~owned_handle() { reset(); }
  owned_handle(owned_handle &&other) noexcept
      : m_handle(std::exchange(other.m_handle, Handle{})) {}
  owned_handle &operator=(owned_handle &&other) noexcept {
    if (this != &other) {
      reset();
      m_handle = std::exchange(other.m_handle, Handle{});
    }
    return *this;
  }
  owned_handle(const owned_handle &) = delete;
  owned_handle &operator=(const owned_handle &) = delete;

  [[nodiscard]] Handle get() const noexcept { return m_handle; }
  // Where a create call writes the new handle (cudaEventCreate(h.out())); the owner is empty.
  [[nodiscard]] Handle *out() noexcept { return &m_handle; }

private:
  void reset() noexcept {
    if (m_handle)
      Release(std::exchange(m_handle, Handle{}));
  }
  Handle m_handle{};
};

} // namespace reducetune
