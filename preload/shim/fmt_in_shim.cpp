// {fmt} compiled into libhangshim.so. Debian ships libfmt only as a shared library, which
// depends on libstdc++.so.6: preloaded into every process of a job, it would load the system's
// libstdc++ ahead of the (often newer) one the job brings — the classic "GLIBCXX_3.4.xx not
// found" failure. So the shim carries its own {fmt}, like its own static libstdc++.
// format-inl.h holds fmt's out-of-line functions; the explicit instantiations below are the
// ones format.h declares `extern template` for non-header-only builds.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);
}  // namespace detail
FMT_END_NAMESPACE
