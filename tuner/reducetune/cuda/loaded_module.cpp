#include "reducetune/cuda/loaded_module.hpp"

#include "reducetune/cuda/driver_api.hpp"
#include "reducetune/errors.hpp"

#include <cuda_runtime_api.h>

#include <utility>

namespace reducetune {

loaded_module::loaded_module(const compiled_program &program) : m_lowered(program.lowered) {
  RT_CUDA_CALL(cudaFree(nullptr)); // the runtime makes the primary context current
  RT_DRIVER_CALL(driver_api::get().cuModuleLoadData(&m_module, program.cubin.data()));
}

loaded_module::~loaded_module() {
  if (m_module) RT_DRIVER_CALL_NOEXCEPT(driver_api::get().cuModuleUnload(m_module));
}

loaded_module::loaded_module(loaded_module &&other) noexcept
    : m_module(std::exchange(other.m_module, nullptr)), m_lowered(std::move(other.m_lowered)) {}

loaded_module &loaded_module::operator=(loaded_module &&other) noexcept {
  if (this != &other) {
    loaded_module old(std::move(*this));
    m_module = std::exchange(other.m_module, nullptr);
    m_lowered = std::move(other.m_lowered);
  }
  return *this;
}

CUfunction loaded_module::function(const std::string &name_expression) const {
  const auto it = m_lowered.find(name_expression);
  if (it == m_lowered.end())
    throw invalid_configuration("the compiled program has no kernel '" + name_expression + "'");
  CUfunction f = nullptr;
  RT_DRIVER_CALL(driver_api::get().cuModuleGetFunction(&f, m_module, it->second.c_str()));
  return f;
}

} // namespace reducetune
