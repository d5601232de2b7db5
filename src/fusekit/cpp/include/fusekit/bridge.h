// fusekit's bridge from C++ kernels to its simulator (written for fusekit; not a CANN header).
//
// Every Ascend C call of a kernel becomes one call of `fusekit_dispatch`, a function the Python side
// installs: the call's name, the object it is a method of (0 for a free function), the kernel source's
// file:line, and its arguments as `Arg` records. The simulator runs the instruction (the same code a pyasc
// kernel runs) and returns its result in one more `Arg`. A call the simulator refused (a KernelError) returns
// non-zero: the kernel is unwound with `fusekit::Abort` to its entry, and Python raises the error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace fusekit {

enum ArgKind : int32_t {
    ARG_NONE = 0, ARG_INT = 1, ARG_FLOAT = 2, ARG_OBJECT = 3, ARG_ADDRESS = 4, ARG_DTYPE = 5, ARG_ENUM = 6,
    ARG_STRUCT = 7, ARG_STRING = 8, ARG_ARRAY = 9,
};

// One argument or result. INT: i (size: bytes, negative for signed); FLOAT: f, s = its dtype; OBJECT: i = the
// simulator object's handle; ADDRESS: i = a GM address; DTYPE: s; ENUM: s = the enum, i = its member's index;
// STRUCT: s = the struct, p = its fields (size of them); STRING: s; ARRAY: p = int64 values (size of them).
struct Arg {
    int32_t kind;
    int32_t size;
    int64_t i;
    double f;
    const char* s;
    const void* p;
};

using Dispatch = int (*)(const char* name, int64_t self, const char* file, int32_t line, int32_t n,
                         const Arg* args, Arg* result);

struct Abort {};  // the simulator raised: unwind the kernel to its entry

}  // namespace fusekit

extern "C" fusekit::Dispatch fusekit_dispatch;  // defined in the glue fusekit compiles with each source

namespace fusekit {

// The element type names of fusekit.asc.dtypes, for a C++ type.
template <class T> struct Dtype { static constexpr const char* name = nullptr; };
#define FUSEKIT_DTYPE(T, N) template <> struct Dtype<T> { static constexpr const char* name = N; };
FUSEKIT_DTYPE(bool, "bool")
FUSEKIT_DTYPE(int8_t, "int8")
FUSEKIT_DTYPE(uint8_t, "uint8")
FUSEKIT_DTYPE(int16_t, "int16")
FUSEKIT_DTYPE(uint16_t, "uint16")
FUSEKIT_DTYPE(int32_t, "int32")
FUSEKIT_DTYPE(uint32_t, "uint32")
FUSEKIT_DTYPE(int64_t, "int64")
FUSEKIT_DTYPE(uint64_t, "uint64")
FUSEKIT_DTYPE(float, "float32")
FUSEKIT_DTYPE(double, "float64")

// The enums the simulator knows, by their fusekit.asc class name (specialised in enums.h).
template <class E> struct EnumName { static constexpr const char* name = nullptr; };

// A struct's fields as Args (specialised with FUSEKIT_STRUCT).
template <class S> struct Fields;

// The arguments of one call, with the storage that nested ones (a struct's fields) need until it returns.
class Call {
public:
    std::vector<Arg> args;

    template <class T> void add(const T& value) { args.push_back(make(value)); }

    template <class T> Arg make(const T& value) {
        using U = std::remove_cv_t<std::remove_reference_t<T>>;
        if constexpr (std::is_same_v<U, Arg>) {
            return value;
        } else if constexpr (std::is_enum_v<U>) {
            static_assert(EnumName<U>::name != nullptr, "fusekit: this enum is not one of the simulator's");
            return Arg{ARG_ENUM, 0, static_cast<int64_t>(value), 0.0, EnumName<U>::name, nullptr};
        } else if constexpr (std::is_same_v<U, bool>) {
            return Arg{ARG_INT, 0, value ? 1 : 0, 0.0, "bool", nullptr};
        } else if constexpr (std::is_integral_v<U>) {
            return Arg{ARG_INT, static_cast<int32_t>(std::is_signed_v<U> ? -int(sizeof(U)) : int(sizeof(U))),
                       static_cast<int64_t>(value), 0.0, Dtype<U>::name, nullptr};
        } else if constexpr (std::is_floating_point_v<U>) {
            return Arg{ARG_FLOAT, int32_t(sizeof(U)), 0, static_cast<double>(value), Dtype<U>::name, nullptr};
        } else if constexpr (Dtype<U>::name != nullptr && !std::is_arithmetic_v<U>) {  // half, bfloat16_t
            return Arg{ARG_FLOAT, 2, 0, static_cast<double>(static_cast<float>(value)), Dtype<U>::name, nullptr};
        } else if constexpr (std::is_pointer_v<U>) {
            if constexpr (std::is_same_v<std::remove_cv_t<std::remove_pointer_t<U>>, char>) {
                return Arg{ARG_STRING, 0, 0, 0.0, value, nullptr};
            } else {
                return Arg{ARG_ADDRESS, 0, static_cast<int64_t>(reinterpret_cast<uintptr_t>(value)), 0.0,
                           Dtype<std::remove_cv_t<std::remove_pointer_t<U>>>::name, nullptr};
            }
        } else if constexpr (std::is_array_v<U>) {
            auto& values = storage.emplace_back();
            for (auto v : value) values.push_back(make(v));
            return Arg{ARG_ARRAY, int32_t(values.size()), 0, 0.0, nullptr, values.data()};
        } else {
            return Fields<U>::of(value, *this);  // objects (tensors, queues) and structs
        }
    }

    // a struct's fields: Arg{ARG_STRUCT, count, ..., name, fields}
    template <class... F> Arg fields(const char* name, const F&... field) {
        auto& values = storage.emplace_back();
        (values.push_back(make(field)), ...);
        return Arg{ARG_STRUCT, int32_t(values.size()), 0, 0.0, name, values.data()};
    }

private:
    std::deque<std::vector<Arg>> storage;
};

// Where a call was written: captured by the default arguments at the call site.
struct Site {
    const char* file;
    int line;
    Site(const char* f = __builtin_FILE(), int l = __builtin_LINE()) : file(f), line(l) {}
};

inline Arg invoke(const char* name, int64_t self, const Site& site, Call& call) {
    Arg result{ARG_NONE, 0, 0, 0.0, nullptr, nullptr};
    if (fusekit_dispatch == nullptr) throw Abort{};  // not run by fusekit (a static object before a launch)
    if (fusekit_dispatch(name, self, site.file, site.line, int32_t(call.args.size()), call.args.data(), &result) != 0)
        throw Abort{};
    return result;
}

template <class... A> Arg send(const char* name, int64_t self, const Site& site, const A&... args) {
    Call call;
    (call.add(args), ...);
    return invoke(name, self, site, call);
}

template <class T> T value_of(const Arg& r) {
    if constexpr (std::is_pointer_v<T>) return reinterpret_cast<T>(static_cast<uintptr_t>(r.i));
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(r.kind == ARG_FLOAT ? int64_t(r.f) : r.i);
    else return static_cast<T>(r.kind == ARG_INT ? double(r.i) : r.f);
}

// The first argument of a forwarded API call (a tensor): it carries the call's site.
struct Object {
    int64_t handle = 0;
};

struct First {
    Arg arg;
    Site site;
    template <class T, class = std::enable_if_t<std::is_base_of_v<Object, T>>>
    First(const T& t, const char* f = __builtin_FILE(), int l = __builtin_LINE())
        : arg{ARG_OBJECT, 0, t.handle, 0.0, nullptr, nullptr}, site(f, l) {}
};

template <class... A> void forward(const char* name, const First& first, const A&... args) {
    Call call;
    call.add(first.arg);
    (call.add(args), ...);
    invoke(name, 0, first.site, call);
}

// An object of the simulator (a tensor, queue, pipe) travels as its handle; a parameter struct, as the fields its
// fusekit_fields member lists, in the order of fusekit.asc's struct of the same name.
template <class S> struct Fields {
    static Arg of(const S& s, Call& call) {
        if constexpr (std::is_base_of_v<Object, S>) {
            return Arg{ARG_OBJECT, 0, s.handle, 0.0, nullptr, nullptr};
        } else {
            return s.fusekit_fields(call);
        }
    }
};

}  // namespace fusekit


// FUSEKIT_FORWARD(Name): AscendC::Name(tensor, ...) sent as it is written; the simulator checks the arguments
// (as pyasc's function of the same name does) and names the call in its KernelError. The explicit template
// arguments the API takes (Muls<half, true>, DataCopy<half>, Add<float, false>) are accepted: the dtype is the
// tensors' (the simulator reads it there), and isSetMask = false travels as pyasc's is_set_mask=False.
#define FUSEKIT_FORWARD(Name)                                                                \
    template <typename... TemplateArgs, typename... A>                                       \
    inline void Name(const ::fusekit::First& first, const A&... args) {                      \
        ::fusekit::forward(#Name, first, args...);                                           \
    }                                                                                        \
    template <typename T, auto V, auto... Values, typename... A>                             \
    inline void Name(const ::fusekit::First& first, const A&... args) {                      \
        if constexpr (std::is_same_v<decltype(V), bool>) {                                   \
            if (!V) return ::fusekit::forward(#Name "@is_set_mask", first, args...);         \
        }                                                                                    \
        ::fusekit::forward(#Name, first, args...);                                           \
    }                                                                                        \
    template <auto V, auto... Values, typename... A>                                         \
    inline void Name(const ::fusekit::First& first, const A&... args) {                      \
        ::fusekit::forward(#Name, first, args...);                                           \
    }

// FUSEKIT_FORWARD_PARAMS(Name, Params): the same call with a braced parameter struct last
// (Add(dst, src0, src1, mask, repeat, {1, 1, 1, 8, 8, 8})), which a template parameter cannot be deduced from:
// overloads of 2 to 6 leading arguments whose last parameter is the instruction's Params.
#define FUSEKIT_PARAMS_OVERLOAD(Name, Params, Leading, Pass)                                       \
    template <typename... TemplateArgs, Leading>                                                  \
    inline void Name(const ::fusekit::First& first, FUSEKIT_ARGS_##Pass, const Params& params) {  \
        ::fusekit::forward(#Name, first, FUSEKIT_PASS_##Pass, params);                            \
    }                                                                                             \
    template <typename T, auto V, auto... Values, Leading>                                        \
    inline void Name(const ::fusekit::First& first, FUSEKIT_ARGS_##Pass, const Params& params) {  \
        if constexpr (std::is_same_v<decltype(V), bool>) {                                        \
            if (!V) return ::fusekit::forward(#Name "@is_set_mask", first, FUSEKIT_PASS_##Pass, params); \
        }                                                                                         \
        ::fusekit::forward(#Name, first, FUSEKIT_PASS_##Pass, params);                            \
    }
#define FUSEKIT_ARGS_2 const A1& a1, const A2& a2
#define FUSEKIT_ARGS_3 FUSEKIT_ARGS_2, const A3& a3
#define FUSEKIT_ARGS_4 FUSEKIT_ARGS_3, const A4& a4
#define FUSEKIT_ARGS_5 FUSEKIT_ARGS_4, const A5& a5
#define FUSEKIT_ARGS_6 FUSEKIT_ARGS_5, const A6& a6
#define FUSEKIT_PASS_2 a1, a2
#define FUSEKIT_PASS_3 FUSEKIT_PASS_2, a3
#define FUSEKIT_PASS_4 FUSEKIT_PASS_3, a4
#define FUSEKIT_PASS_5 FUSEKIT_PASS_4, a5
#define FUSEKIT_PASS_6 FUSEKIT_PASS_5, a6
#define FUSEKIT_COMMA ,
#define FUSEKIT_FORWARD_PARAMS(Name, Params)                                                                  \
    FUSEKIT_PARAMS_OVERLOAD(Name, Params, class A1 FUSEKIT_COMMA class A2, 2)                                 \
    FUSEKIT_PARAMS_OVERLOAD(Name, Params, class A1 FUSEKIT_COMMA class A2 FUSEKIT_COMMA class A3, 3)          \
    FUSEKIT_PARAMS_OVERLOAD(Name, Params, class A1 FUSEKIT_COMMA class A2 FUSEKIT_COMMA class A3              \
                            FUSEKIT_COMMA class A4, 4)                                                        \
    FUSEKIT_PARAMS_OVERLOAD(Name, Params, class A1 FUSEKIT_COMMA class A2 FUSEKIT_COMMA class A3              \
                            FUSEKIT_COMMA class A4 FUSEKIT_COMMA class A5, 5)                                 \
    FUSEKIT_PARAMS_OVERLOAD(Name, Params, class A1 FUSEKIT_COMMA class A2 FUSEKIT_COMMA class A3              \
                            FUSEKIT_COMMA class A4 FUSEKIT_COMMA class A5 FUSEKIT_COMMA class A6, 6)
