// Kernel entries, the <<<...>>> launch and the host main for fusekit (written for fusekit; not a CANN header).
#pragma once
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <exception>
#include <string>
#include <tuple>
#include <utility>

#include "bridge.h"
#include "half.h"

namespace fusekit {

// a struct passed by value (AscendC::tiling::TCubeTiling): its bytes travel, at the address the Arg holds
template <class P> constexpr bool by_value_struct =
    std::is_class_v<P> && std::is_trivially_copyable_v<P> && Dtype<P>::name == nullptr;

template <class P> P from_arg(const Arg& a) {
    if constexpr (by_value_struct<P>) {
        P value;
        std::memcpy(&value, reinterpret_cast<const void*>(static_cast<uintptr_t>(a.i)), sizeof(P));
        return value;
    } else if constexpr (std::is_pointer_v<P>) {
        return reinterpret_cast<P>(static_cast<uintptr_t>(a.i));
    } else if constexpr (std::is_integral_v<P> || std::is_enum_v<P>) {
        return static_cast<P>(a.i);
    } else if constexpr (std::is_floating_point_v<P> || Dtype<P>::name != nullptr) {
        return static_cast<P>(static_cast<float>(a.f));
    } else {
        static_assert(std::is_pointer_v<P>, "fusekit: a kernel parameter must be a pointer, an integer, a float or a "
                                            "trivially copyable struct");
    }
}

template <class P> const char* type_code() {
    if constexpr (by_value_struct<P>) {  // "struct136": its size in bytes
        static const std::string code = "struct" + std::to_string(sizeof(P));
        return code.c_str();
    } else if constexpr (std::is_pointer_v<P>) return "gm";
    else if constexpr (std::is_same_v<P, bool>) return "b";
    else if constexpr (std::is_integral_v<P>) {
        static const std::string code = std::string(std::is_signed_v<P> ? "i" : "u") + std::to_string(8 * sizeof(P));
        return code.c_str();
    } else if constexpr (std::is_same_v<P, float>) return "f32";
    else if constexpr (std::is_same_v<P, double>) return "f64";
    else if constexpr (Dtype<P>::name != nullptr) return Dtype<P>::name;
    else return "?";
}

// "gm,gm,u32,f32": the parameter types of a kernel, for the launcher on the Python side
template <class... P> const char* describe(void (*)(P...)) {
    static const std::string text = [] {
        std::string s;
        ((s += std::string(s.empty() ? "" : ",") + type_code<P>()), ...);
        return s;
    }();
    return text.c_str();
}

inline int report(const char* what) {
    Call call;
    call.add(what);
    Arg result{};
    if (fusekit_dispatch != nullptr)
        fusekit_dispatch("fusekit.exception", 0, "", 0, int32_t(call.args.size()), call.args.data(), &result);
    return 1;
}

template <class F> int guarded(F&& body) {
    try {
        body();
        return 0;
    } catch (const Abort&) {
        return 1;
    } catch (const std::exception& e) {
        return report(e.what());
    } catch (...) {
        return report("an exception that is not a std::exception");
    }
}

// A crash of the kernel's compiled code (a null or wild pointer, a division by zero) stops the launch with a
// KernelError instead of the process: the signal returns to the core's entry, which reports it (fusekit.crash).
inline thread_local sigjmp_buf* crash_target = nullptr;

inline void on_crash(int sig) {
    if (crash_target != nullptr) siglongjmp(*crash_target, sig);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

template <class F> int crash_guarded(F&& body) {
    static const int signals[] = {SIGSEGV, SIGFPE, SIGBUS, SIGILL};
    struct sigaction action {}, previous[4];
    action.sa_handler = on_crash;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_NODEFER;
    for (int k = 0; k < 4; ++k) sigaction(signals[k], &action, &previous[k]);
    sigjmp_buf here;
    sigjmp_buf* outer = crash_target;
    crash_target = &here;
    int status;
    if (int sig = sigsetjmp(here, 1); sig == 0) {
        status = guarded(body);
    } else {
        Call call;
        call.add(int32_t(sig));
        Arg result{};
        fusekit_dispatch("fusekit.crash", 0, "", 0, int32_t(call.args.size()), call.args.data(), &result);
        status = 1;
    }
    crash_target = outer;
    for (int k = 0; k < 4; ++k) sigaction(signals[k], &previous[k], nullptr);
    return status;
}

template <class... P, size_t... I> void apply(void (*f)(P...), const Arg* a, std::index_sequence<I...>) {
    f(from_arg<P>(a[I])...);
}

// one core's run of kernel f with the launch's arguments
template <class... P> int run_entry(void (*f)(P...), const Arg* a) {
    return crash_guarded([&] { apply(f, a, std::index_sequence_for<P...>{}); });
}

// the entry of any kernel of signature P... (a template kernel's instantiation has no glue entry of its own)
template <class... P> int entry_of(uint64_t kernel, const Arg* a) {
    return run_entry(reinterpret_cast<void (*)(P...)>(static_cast<uintptr_t>(kernel)), a);
}

template <class... P> struct Launcher {
    void (*kernel)(P...);
    const char* name;
    int64_t blocks;
    Site site;

    // the kernel's own parameter types: a launch with other arguments fails to compile at the launch's line
    void operator()(P... args) const {
        Call call;
        call.add(name);
        call.add(blocks);
        call.add(uint64_t(reinterpret_cast<uintptr_t>(kernel)));
        call.add(uint64_t(reinterpret_cast<uintptr_t>(&entry_of<P...>)));
        call.add(describe(kernel));
        (call.add(launch_value(args)), ...);
        invoke("fusekit.launch", 0, site, call);
    }

    template <class T> static auto launch_value(const T& value) {
        if constexpr (by_value_struct<T>)  // the host's copy, read by the launch before this call returns
            return Arg{ARG_ADDRESS, int32_t(sizeof(T)), int64_t(reinterpret_cast<uintptr_t>(&value)), 0.0, "struct",
                       nullptr};
        else
            return value;
    }
};

// kernel<<<blocks, l2ctrl, stream>>>(args...) as fusekit compiles it (fusekit/cpp/glue.py)
template <class... P, class B, class... Rest>
Launcher<P...> Launch(void (*kernel)(P...), const char* name, const char* file, int line, B blocks, Rest&&...) {
    return Launcher<P...>{kernel, name, static_cast<int64_t>(blocks), Site(file, line)};
}

template <class R, class... P> int run_main(R (*user_main)(P...), int argc, char** argv) {
    int status = 0;
    int failed = guarded([&] {
        if constexpr (sizeof...(P) == 0) {
            status = int(user_main());
        } else {  // main(int, char**) or main(int, const char* argv[])
            using Argv = std::tuple_element_t<1, std::tuple<P...>>;
            status = int(user_main(argc, const_cast<Argv>(argv)));
        }
    });
    return failed ? -1 : status;
}

}  // namespace fusekit
