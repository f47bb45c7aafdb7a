// reducetune._core: the private extension module. The public API is the reducetune package.
#include "common.hpp"

#include "reducetune/errors.hpp"

#include <exception>
#include <filesystem>

namespace rtpy {
namespace {

// Raises the reducetune.errors class of that name (defined in Python, so that the classes
// exist, documented and typed, without the extension).
void raise_named(const char *name, const char *what, const std::string *log = nullptr) {
  nb::object errors = nb::module_::import_("reducetune.errors");
  nb::object type = errors.attr(name);
  nb::object instance = log ? type(what, *log) : type(what);
  PyErr_SetObject(type.ptr(), instance.ptr());
}

} // namespace

void bind_errors(nb::module_ &) {
  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const rt::compile_error &e) {
      raise_named("CompileError", e.what(), &e.log());
    } catch (const rt::invalid_configuration &e) {
      raise_named("InvalidConfiguration", e.what());
    } catch (const rt::launch_error &e) {
      raise_named("LaunchError", e.what());
    } catch (const rt::verification_error &e) {
      raise_named("VerificationError", e.what());
    } catch (const rt::store_error &e) {
      raise_named("StoreError", e.what());
    } catch (const rt::device_error &e) {
      raise_named("DeviceError", e.what());
    } catch (const rt::error &e) {
      raise_named("Error", e.what());
    } catch (const std::filesystem::filesystem_error &e) {
      // an OSError, which the command line reports in one line like every file problem
      PyErr_SetString(PyExc_OSError, e.what());
    }
  });
}

} // namespace rtpy

NB_MODULE(_core, m) {
  m.doc() = "reducetune's C++ core (private: use the reducetune package)";
  rtpy::bind_errors(m);
  rtpy::bind_protocol(m);
  rtpy::bind_space(m);
  rtpy::bind_problem(m);
  rtpy::bind_compile(m);
  rtpy::bind_device(m);
  rtpy::bind_store(m);
  rtpy::bind_reducer(m);
  rtpy::bind_app_timing(m);
  rtpy::bind_export_names(m);
}
