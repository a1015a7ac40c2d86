#pragma once
// What one kernel launch is, built once per family (tuner/kernels/<family>/launch.hpp) for both
// the tuner's DeviceInstance and the runtime: the arguments, stored in the types and order of the
// kernel's parameter list, and the launch geometry. Each caller issues it with its own API.
//
// The argument pack also spells its parameter list the way the compiler mangles it, so that the
// runtime's check of a code object's symbols (the suffix after the template's name and
// arguments) is derived from the very types the launch passes and cannot drift from them.
#include <array>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace ktune {

namespace backend {
class Context;
}

namespace detail {

// The Itanium ABI code of a builtin type the kernels take.
template <class T>
constexpr char builtin_code() {
  if constexpr (std::is_same_v<T, void>)
    return 'v';
  else if constexpr (std::is_same_v<T, unsigned char>)
    return 'h';
  else if constexpr (std::is_same_v<T, unsigned short>)
    return 't';
  else if constexpr (std::is_same_v<T, int>)
    return 'i';
  else if constexpr (std::is_same_v<T, unsigned>)
    return 'j';
  else if constexpr (std::is_same_v<T, long>)
    return 'l';
  else if constexpr (std::is_same_v<T, long long>)
    return 'x';
  else if constexpr (std::is_same_v<T, float>)
    return 'f';
  else
    static_assert(std::is_same_v<T, void>, "a kernel parameter of a type the mangler does not know");
}

// Appends `T` mangled without substitutions: P (pointer) and K (const) prefixes, then the builtin.
template <class T>
constexpr void unsubstituted(std::string& out) {
  if constexpr (std::is_pointer_v<T>) {
    out += 'P';
    unsubstituted<std::remove_pointer_t<T>>(out);
  } else if constexpr (std::is_const_v<T>) {
    out += 'K';
    unsubstituted<std::remove_const_t<T>>(out);
  } else {
    out += builtin_code<T>();
  }
}

template <class T>
constexpr std::string unsubstituted() {
  std::string out;
  unsubstituted<T>(out);
  return out;
}

// Appends `type` (an unsubstituted mangling) to `out`, replacing a component seen before by its
// substitution S<seq-id>_ and recording each new qualified or pointer component, innermost first.
// Substitution number n is written S_ for 0, else S<n - 1 in base 36, digits then capitals>_.
constexpr void mangle(const std::string& type, std::string& out, std::vector<std::string>& seen) {
  if (type.size() == 1) {  // builtins are never substituted
    out += type;
    return;
  }
  for (size_t n = 0; n < seen.size(); ++n)
    if (seen[n] == type) {
      out += 'S';
      if (n > 0) {
        std::string digits;
        for (size_t id = n - 1;; id /= 36) {
          const size_t d = id % 36;
          digits.insert(digits.begin(), static_cast<char>(d < 10 ? '0' + d : 'A' + (d - 10)));
          if (id < 36) break;
        }
        out += digits;
      }
      out += '_';
      return;
    }
  out += type[0];
  mangle(type.substr(1), out, seen);
  seen.push_back(type);
}

}  // namespace detail

// Substitution candidates of a kernel's name ktune::<kernel><integers...>: the namespace and the
// template name (integer template arguments add none).
inline constexpr size_t kKernelNameSubstitutions = 2;

// A kernel's arguments in the types and order of its parameter list; pointers() is the `void**`
// that cuLaunchKernel / hipModuleLaunchKernel take, pointing into this pack.
template <class... Parameters>
struct KernelArguments {
  static constexpr size_t kCount = sizeof...(Parameters);
  std::tuple<Parameters...> values;

  std::array<void*, kCount> pointers() noexcept {
    return std::apply([](auto&... v) { return std::array<void*, kCount>{static_cast<void*>(&v)...}; }, values);
  }

  // The parameter list as the tail of the kernel's mangled name: "E" (the end of the template
  // arguments), "v" (the void return), then the parameters, for a symbol whose qualified name left
  // `prefix_substitutions` substitution candidates before it (kKernelNameSubstitutions for the kernels of templates/).
  static constexpr std::string mangled(size_t prefix_substitutions) {
    std::vector<std::string> seen(prefix_substitutions, "#");  // the prefix's: they match no parameter
    std::string out = "Ev";
    (detail::mangle(detail::unsubstituted<Parameters>(), out, seen), ...);
    return out;
  }
};

// How one kernel is launched. overlaps_previous: the kernel waits for the launch ahead of it
// itself (templates/common/launch_order.hpp), so that an API that can may start it early.
struct LaunchShape {
  std::array<unsigned, 3> grid{1, 1, 1};
  unsigned block = 1;
  size_t shared_bytes = 0;
  bool overlaps_previous = false;
};

// A launch of a kernel taking `Arguments`.
template <class Arguments>
struct KernelLaunch {
  Arguments arguments;
  LaunchShape shape;
};

// Issues `function` on `ctx`'s stream (Context::launch_dependent where shape.overlaps_previous).
void launch(backend::Context& ctx, void* function, const LaunchShape& shape, void** arguments);

}  // namespace ktune
