// AscendC::Std: the subset of the C++ standard library Ascend C documents (asc-devkit docs/zh/api/Utils-API/
// CPP标准库: 类型特性, 容器函数 tuple / make_tuple / get, 数学函数 abs / sqrt, 算法 max / min, 通用工具
// index_sequence). The type traits and tuple mean what the standard's do (the pages describe them so), so they are
// the standard's; abs, sqrt, max and min are written from their pages: max / min take two operands of one type
// ("两个源操作数的数据类型必须相同"), sqrt of an int64_t truncates ("其计算结果将被截断为整数").
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

namespace AscendC {
namespace Std {

using std::add_const;
using std::add_const_t;
using std::add_cv;
using std::add_cv_t;
using std::add_lvalue_reference;
using std::add_lvalue_reference_t;
using std::add_pointer;
using std::add_pointer_t;
using std::add_rvalue_reference;
using std::add_rvalue_reference_t;
using std::add_volatile;
using std::add_volatile_t;
using std::bool_constant;
using std::conditional;
using std::conditional_t;
using std::enable_if;
using std::enable_if_t;
using std::false_type;
using std::integral_constant;
using std::is_array;
using std::is_array_v;
using std::is_base_of;
using std::is_base_of_v;
using std::is_const;
using std::is_const_v;
using std::is_convertible;
using std::is_convertible_v;
using std::is_floating_point;
using std::is_floating_point_v;
using std::is_integral;
using std::is_integral_v;
using std::is_pointer;
using std::is_pointer_v;
using std::is_reference;
using std::is_reference_v;
using std::is_same;
using std::is_same_v;
using std::is_void;
using std::is_void_v;
using std::remove_const;
using std::remove_const_t;
using std::remove_cv;
using std::remove_cv_t;
using std::remove_pointer;
using std::remove_pointer_t;
using std::remove_reference;
using std::remove_reference_t;
using std::remove_volatile;
using std::remove_volatile_t;
using std::true_type;

using std::get;
using std::make_tuple;
using std::tuple;
using std::tuple_element;
using std::tuple_size;

template <size_t... Idx> using index_sequence = std::index_sequence<Idx...>;
template <size_t N> using make_index_sequence = std::make_index_sequence<N>;
template <class T, T... Values> using integer_sequence = std::integer_sequence<T, Values...>;

template <typename T> inline T abs(const T src) { return src < T(0) ? T(-src) : src; }

template <typename T> inline T sqrt(const T src) {
    if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(std::sqrt(static_cast<double>(src)));  // truncated toward zero (sqrt1.md)
    } else {
        return std::sqrt(src);
    }
}

template <typename T, typename U> inline constexpr auto max(const T& src0, const U& src1) {
    static_assert(std::is_same_v<T, U>, "AscendC::Std::max: both operands have one data type (max-267.md)");
    return src0 < src1 ? src1 : src0;
}

template <typename T, typename U> inline constexpr auto min(const T& src0, const U& src1) {
    static_assert(std::is_same_v<T, U>, "AscendC::Std::min: both operands have one data type (min-268.md)");
    return src1 < src0 ? src1 : src0;
}

}  // namespace Std
}  // namespace AscendC
