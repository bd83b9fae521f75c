/* hympi.hpp: a header-only C++17 interface over the C MPI API (include/mpi.h).
 *
 * Everything lives in namespace `hympi`. The header uses only the standard C interface, so it
 * works with hympi's MPI-5.0 ABI header and with other MPI implementations alike.
 *
 *   hympi::environment env(argc, argv);          // MPI_Init_thread ... MPI_Finalize (RAII)
 *   hympi::comm world = hympi::comm::world();    // non-owning view of MPI_COMM_WORLD
 *   std::vector<double> v(10, world.rank());
 *   double total = world.allreduce(1.0, std::plus<>());   // datatype and MPI_SUM deduced
 *   world.send(v, 1, 7);                          // std::vector, hympi::view, scalars, arrays
 *
 * Error handling: every communicator this header wraps gets MPI_ERRORS_RETURN (so does
 * MPI_COMM_SELF and MPI_COMM_WORLD when the environment starts MPI), and every failing call
 * throws `hympi::error`, which carries the MPI error code, its class and MPI_Error_string's
 * message. Destructors never throw: they ignore errors of the free calls.
 *
 * Ownership: `comm`, `group`, `info`, `datatype`, `op` and `request` are move-only. Objects
 * made by this header (dup, split, derived datatypes, user ops, ...) own their handle and free
 * it in the destructor (only while MPI is initialized and not finalized). Constructing one of
 * them from a raw handle (implicitly) makes a non-owning view; `T::adopt(handle)` takes
 * ownership. `native()` and the implicit conversion give the raw handle back.
 *
 * Requests: the destructor of a still-active `request` waits for it (MPI_Wait). While an
 * exception is propagating through the scope that created it, it cancels it first
 * (MPI_Cancel, then MPI_Wait), so an error path never blocks on a receive that will not be
 * matched (a send the library cannot cancel still waits until it is received). The buffers
 * of nonblocking calls must outlive the request: temporaries other than views do not compile.
 *
 * Exceptions: while an `environment` lives, an exception that escapes (to std::terminate, or
 * out of the environment's scope) is printed and the whole job ends with MPI_Abort, so the
 * other ranks do not wait forever.
 *
 * Threads (OpenMP): `hympi::omp::thread_comm` (compiled when _OPENMP is defined) gives every
 * thread of a team its own duplicate of a communicator; `hympi::region_hints(hint::... | ...)`
 * makes the info object of the MPI-4 assertions (and hympi's per-thread hint) to give it.
 *
 * Halo exchanges: `dims_create`, `comm::cart_create`, `cart_shift`, `cart_coords`;
 * `datatype::subarray`; `comm::isend(container, layout, dest, tag)` sends one element of a
 * derived datatype laid over a container (bounds-checked); `hympi::waitall(std::vector<request>&)`.
 */
#ifndef HYMPI_HPP_INCLUDED
#define HYMPI_HPP_INCLUDED

#include <mpi.h>

#include <array>
#include <chrono>
#include <complex>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace hympi {

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// An MPI call failed: carries the error code, its class and the library's message.
class error : public std::exception {
public:
    /// Builds the error of `code` returned by the call named `where` (may be null).
    explicit error(int code, const char *where = nullptr) : code_(code), class_(code) {
        int initialized = 0, finalized = 0;
        MPI_Initialized(&initialized);
        MPI_Finalized(&finalized);
        bool usable = initialized && !finalized;
        if (usable) {
            int cls = code;
            if (MPI_Error_class(code, &cls) == MPI_SUCCESS)
                class_ = cls;
        }
        char buf[MPI_MAX_ERROR_STRING];
        int len = 0;
        if (MPI_Error_string(code, buf, &len) == MPI_SUCCESS && len > 0)
            message_.assign(buf, static_cast<std::size_t>(len));
        else
            message_ = "MPI error " + std::to_string(code);
        what_ = where ? std::string(where) + ": " + message_ : message_;
        what_ += " (error class " + std::to_string(class_) + ")";
    }
    /// The error code returned by the MPI call.
    int code() const noexcept { return code_; }
    /// The error class of the code (MPI_Error_class), e.g. MPI_ERR_RANK.
    int error_class() const noexcept { return class_; }
    /// MPI_Error_string of the code.
    const std::string &message() const noexcept { return message_; }
    const char *what() const noexcept override { return what_.c_str(); }

private:
    int code_;
    int class_;
    std::string message_;
    std::string what_;
};

namespace detail {

/// Throws hympi::error when `rc` is not MPI_SUCCESS.
inline void check(int rc, const char *where) {
    if (rc != MPI_SUCCESS)
        throw error(rc, where);
}

/// True between MPI_Init and MPI_Finalize: when freeing handles is allowed.
inline bool mpi_active() noexcept {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    return initialized && !finalized;
}

/// Narrows a size to an MPI count, throwing MPI_ERR_COUNT when it does not fit an int.
inline int to_count(std::size_t n) {
    if (n > static_cast<std::size_t>(2147483647))
        throw error(MPI_ERR_COUNT, "hympi (count larger than INT_MAX)");
    return static_cast<int>(n);
}

} // namespace detail

/// Wildcards and special ranks, as typed constants.
inline constexpr int any_source = MPI_ANY_SOURCE;
inline constexpr int any_tag = MPI_ANY_TAG;
inline constexpr int proc_null = MPI_PROC_NULL;
inline constexpr int undefined = MPI_UNDEFINED;

// ---------------------------------------------------------------------------------------------
// Environment
// ---------------------------------------------------------------------------------------------

/// Thread support levels of MPI_Init_thread.
enum class thread_level : int {
    single = MPI_THREAD_SINGLE,
    funneled = MPI_THREAD_FUNNELED,
    serialized = MPI_THREAD_SERIALIZED,
    multiple = MPI_THREAD_MULTIPLE,
};

namespace detail {

/// std::terminate handler installed by the environment: prints the exception and aborts the
/// whole job (MPI_Abort) instead of leaving the other ranks waiting.
[[noreturn]] inline void terminate_handler() noexcept {
    if (std::exception_ptr ep = std::current_exception()) {
        try {
            std::rethrow_exception(ep);
        } catch (const std::exception &e) {
            std::fprintf(stderr, "hympi: uncaught exception: %s\n", e.what());
        } catch (...) {
            std::fprintf(stderr, "hympi: uncaught exception of a non-std::exception type\n");
        }
    } else {
        std::fprintf(stderr, "hympi: std::terminate called\n");
    }
    std::fflush(stderr);
    if (mpi_active()) {
        // A launcher may tear the job down as soon as MPI_Abort reaches it (MPICH's Hydra
        // does, sometimes before it has read the ranks' last output): give it a moment to
        // forward the report above.
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::abort();
}

} // namespace detail

/// RAII for MPI_Init_thread / MPI_Finalize.
///
/// If MPI is already initialized, the environment neither initializes nor finalizes it. While
/// the environment lives, an exception that escapes (reaching std::terminate, or unwinding
/// through the environment's scope) is printed and the job is aborted with MPI_Abort, since the
/// other ranks would otherwise wait forever.
class environment {
public:
    /// MPI_Init_thread(NULL, NULL, required).
    explicit environment(thread_level required = thread_level::single) { init(nullptr, nullptr, required); }
    /// MPI_Init_thread(&argc, &argv, required).
    environment(int &argc, char **&argv, thread_level required = thread_level::single) {
        init(&argc, &argv, required);
    }
    environment(const environment &) = delete;
    environment &operator=(const environment &) = delete;

    ~environment() {
        if (std::uncaught_exceptions() > uncaught_) {
            std::fprintf(stderr, "hympi: an exception left the scope of hympi::environment; aborting the job\n");
            std::fflush(stderr);
            if (detail::mpi_active())
                MPI_Abort(MPI_COMM_WORLD, 1);
        }
        std::set_terminate(previous_);
        if (owns_ && detail::mpi_active())
            MPI_Finalize();
    }

    /// The thread level MPI provides.
    thread_level provided() const noexcept { return provided_; }
    /// True if this environment initialized MPI (and so will finalize it).
    bool owns() const noexcept { return owns_; }

    /// MPI_Initialized.
    static bool initialized() noexcept {
        int f = 0;
        MPI_Initialized(&f);
        return f != 0;
    }
    /// MPI_Finalized.
    static bool finalized() noexcept {
        int f = 0;
        MPI_Finalized(&f);
        return f != 0;
    }
    /// MPI_Query_thread.
    static thread_level query_thread() {
        int p = MPI_THREAD_SINGLE;
        detail::check(MPI_Query_thread(&p), "MPI_Query_thread");
        return static_cast<thread_level>(p);
    }
    /// MPI_Is_thread_main.
    static bool is_thread_main() {
        int f = 0;
        detail::check(MPI_Is_thread_main(&f), "MPI_Is_thread_main");
        return f != 0;
    }
    /// MPI_Get_processor_name.
    static std::string processor_name() {
        char buf[MPI_MAX_PROCESSOR_NAME];
        int len = 0;
        detail::check(MPI_Get_processor_name(buf, &len), "MPI_Get_processor_name");
        return std::string(buf, static_cast<std::size_t>(len));
    }
    /// MPI_Wtime.
    static double wtime() noexcept { return MPI_Wtime(); }
    /// MPI_Abort on MPI_COMM_WORLD.
    [[noreturn]] static void abort(int errorcode) noexcept {
        MPI_Abort(MPI_COMM_WORLD, errorcode);
        std::abort();
    }

private:
    void init(int *argc, char ***argv, thread_level required) {
        uncaught_ = std::uncaught_exceptions();
        if (initialized()) {
            owns_ = false;
            provided_ = query_thread();
        } else {
            int p = MPI_THREAD_SINGLE;
            detail::check(MPI_Init_thread(argc, argv, static_cast<int>(required), &p), "MPI_Init_thread");
            owns_ = true;
            provided_ = static_cast<thread_level>(p);
        }
        detail::check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
        detail::check(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
        previous_ = std::set_terminate(&detail::terminate_handler);
    }

    bool owns_ = false;
    thread_level provided_ = thread_level::single;
    int uncaught_ = 0;
    std::terminate_handler previous_ = nullptr;
};

/// Runs `f` at the start of MPI_Finalize, before MPI is shut down (through an attribute of
/// MPI_COMM_SELF, which MPI_Finalize deletes first). Functions run in reverse order of
/// registration. Needs MPI initialized.
inline void at_finalize(std::function<void()> f) {
    using list = std::vector<std::function<void()>>;
    struct hook {
        static int run(MPI_Comm, int, void *value, void *) {
            std::unique_ptr<list> fs(static_cast<list *>(value));
            for (auto it = fs->rbegin(); it != fs->rend(); ++it)
                (*it)();
            return MPI_SUCCESS;
        }
    };
    static int keyval = MPI_KEYVAL_INVALID;
    if (keyval == MPI_KEYVAL_INVALID)
        detail::check(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &hook::run, &keyval, nullptr),
                      "MPI_Comm_create_keyval");
    void *value = nullptr;
    int found = 0;
    detail::check(MPI_Comm_get_attr(MPI_COMM_SELF, keyval, &value, &found), "MPI_Comm_get_attr");
    if (found) {
        static_cast<list *>(value)->push_back(std::move(f));
    } else {
        auto fs = std::make_unique<list>();
        fs->push_back(std::move(f));
        detail::check(MPI_Comm_set_attr(MPI_COMM_SELF, keyval, fs.get()), "MPI_Comm_set_attr");
        fs.release();
    }
}

// ---------------------------------------------------------------------------------------------
// Datatypes of C++ types
// ---------------------------------------------------------------------------------------------

/// The MPI datatype of a C++ type. Specialize with `static constexpr bool available = true;`
/// and `static MPI_Datatype get()` (returning a committed datatype) for your own types.
template <class T, class Enable = void> struct type_traits {
    static constexpr bool available = false;
};

/// A value with an index, laid out like the C structs of MPI_FLOAT_INT etc. (for maxloc and
/// minloc). std::pair<T, int> has the same layout and may be used instead.
template <class T> struct value_index {
    T value;
    int index;
    friend bool operator==(const value_index &a, const value_index &b) {
        return a.value == b.value && a.index == b.index;
    }
};

#define HYMPI_PREDEFINED_TYPE(CXX, MPITYPE)                                                        \
    template <> struct type_traits<CXX> {                                                          \
        static constexpr bool available = true;                                                    \
        static MPI_Datatype get() noexcept { return MPITYPE; }                                     \
    };
HYMPI_PREDEFINED_TYPE(char, MPI_CHAR)
HYMPI_PREDEFINED_TYPE(signed char, MPI_SIGNED_CHAR)
HYMPI_PREDEFINED_TYPE(unsigned char, MPI_UNSIGNED_CHAR)
HYMPI_PREDEFINED_TYPE(wchar_t, MPI_WCHAR)
HYMPI_PREDEFINED_TYPE(char16_t, MPI_UINT16_T)
HYMPI_PREDEFINED_TYPE(char32_t, MPI_UINT32_T)
HYMPI_PREDEFINED_TYPE(short, MPI_SHORT)
HYMPI_PREDEFINED_TYPE(unsigned short, MPI_UNSIGNED_SHORT)
HYMPI_PREDEFINED_TYPE(int, MPI_INT)
HYMPI_PREDEFINED_TYPE(unsigned, MPI_UNSIGNED)
HYMPI_PREDEFINED_TYPE(long, MPI_LONG)
HYMPI_PREDEFINED_TYPE(unsigned long, MPI_UNSIGNED_LONG)
HYMPI_PREDEFINED_TYPE(long long, MPI_LONG_LONG)
HYMPI_PREDEFINED_TYPE(unsigned long long, MPI_UNSIGNED_LONG_LONG)
HYMPI_PREDEFINED_TYPE(float, MPI_FLOAT)
HYMPI_PREDEFINED_TYPE(double, MPI_DOUBLE)
HYMPI_PREDEFINED_TYPE(long double, MPI_LONG_DOUBLE)
HYMPI_PREDEFINED_TYPE(bool, MPI_CXX_BOOL)
HYMPI_PREDEFINED_TYPE(std::byte, MPI_BYTE)
HYMPI_PREDEFINED_TYPE(std::complex<float>, MPI_CXX_FLOAT_COMPLEX)
HYMPI_PREDEFINED_TYPE(std::complex<double>, MPI_CXX_DOUBLE_COMPLEX)
HYMPI_PREDEFINED_TYPE(std::complex<long double>, MPI_CXX_LONG_DOUBLE_COMPLEX)
#undef HYMPI_PREDEFINED_TYPE

/// Pair types: std::pair<T, int> and value_index<T> for the MPI_*_INT types.
namespace detail {
template <class T> struct pair_type {
    static constexpr bool available = false;
};
#define HYMPI_PAIR_TYPE(CXX, MPITYPE)                                                              \
    template <> struct pair_type<CXX> {                                                            \
        static constexpr bool available = true;                                                    \
        static MPI_Datatype get() noexcept { return MPITYPE; }                                     \
    };
HYMPI_PAIR_TYPE(float, MPI_FLOAT_INT)
HYMPI_PAIR_TYPE(double, MPI_DOUBLE_INT)
HYMPI_PAIR_TYPE(long, MPI_LONG_INT)
HYMPI_PAIR_TYPE(int, MPI_2INT)
HYMPI_PAIR_TYPE(short, MPI_SHORT_INT)
HYMPI_PAIR_TYPE(long double, MPI_LONG_DOUBLE_INT)
#undef HYMPI_PAIR_TYPE
} // namespace detail

template <class T> struct type_traits<std::pair<T, int>, std::enable_if_t<detail::pair_type<T>::available>> {
    static constexpr bool available = true;
    static MPI_Datatype get() noexcept { return detail::pair_type<T>::get(); }
};
template <class T> struct type_traits<value_index<T>, std::enable_if_t<detail::pair_type<T>::available>> {
    static constexpr bool available = true;
    static MPI_Datatype get() noexcept { return detail::pair_type<T>::get(); }
};

/// True when T has an MPI datatype.
template <class T> inline constexpr bool has_datatype_v = type_traits<std::remove_cv_t<T>>::available;

/// The MPI datatype of T; a type without one fails to compile (static_assert).
template <class T> MPI_Datatype datatype_of() {
    static_assert(has_datatype_v<T>,
                  "hympi::datatype_of<T>: T has no MPI datatype (arithmetic types, std::complex, "
                  "std::byte, std::pair<T, int> and hympi::value_index<T> have one; specialize "
                  "hympi::type_traits<T> for your own types)");
    return type_traits<std::remove_cv_t<T>>::get();
}

// ---------------------------------------------------------------------------------------------
// Buffers: std::vector, std::array, C arrays, hympi::view, single values
// ---------------------------------------------------------------------------------------------

/// A non-owning view of `size()` contiguous elements (a small std::span).
template <class T> class view {
public:
    using element_type = T;
    using value_type = std::remove_cv_t<T>;
    view() noexcept = default;
    view(T *data, std::size_t size) noexcept : data_(data), size_(size) {}
    template <class A, class U = T, class = std::enable_if_t<std::is_const_v<U>>>
    view(const std::vector<value_type, A> &v) noexcept : data_(v.data()), size_(v.size()) {}
    template <class A> view(std::vector<value_type, A> &v) noexcept : data_(v.data()), size_(v.size()) {}
    template <std::size_t N> view(T (&a)[N]) noexcept : data_(a), size_(N) {}
    /// A view of const elements from a view of mutable ones.
    template <class U, class = std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>>>
    view(view<U> v) noexcept : data_(v.data()), size_(v.size()) {}

    T *data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    T &operator[](std::size_t i) const noexcept { return data_[i]; }
    T *begin() const noexcept { return data_; }
    T *end() const noexcept { return data_ + size_; }
    /// Elements [offset, offset + count).
    view subview(std::size_t offset, std::size_t count) const noexcept { return view(data_ + offset, count); }

private:
    T *data_ = nullptr;
    std::size_t size_ = 0;
};

template <class T> view(T *, std::size_t) -> view<T>;
template <class T, class A> view(std::vector<T, A> &) -> view<T>;
template <class T, class A> view(const std::vector<T, A> &) -> view<const T>;
template <class T, std::size_t N> view(T (&)[N]) -> view<T>;

namespace detail {

/// How a buffer argument maps to (pointer, count, element type).
template <class B, class = void> struct buffer_traits {
    // A single value.
    using value_type = B;
    static constexpr bool available = has_datatype_v<B>;
    static const B *data(const B &b) { return &b; }
    static B *data(B &b) { return &b; }
    static std::size_t size(const B &) { return 1; }
    static constexpr bool resizable = false;
};
template <class T, class A> struct buffer_traits<std::vector<T, A>> {
    static_assert(!std::is_same_v<T, bool>, "hympi: std::vector<bool> has no contiguous storage; use std::vector<char> or a bool array");
    using value_type = T;
    static constexpr bool available = has_datatype_v<T>;
    static const T *data(const std::vector<T, A> &b) { return b.data(); }
    static T *data(std::vector<T, A> &b) { return b.data(); }
    static std::size_t size(const std::vector<T, A> &b) { return b.size(); }
    static constexpr bool resizable = true;
    static void resize(std::vector<T, A> &b, std::size_t n) { b.resize(n); }
};
template <class C, class Tr, class A> struct buffer_traits<std::basic_string<C, Tr, A>> {
    using value_type = C;
    static constexpr bool available = has_datatype_v<C>;
    static const C *data(const std::basic_string<C, Tr, A> &b) { return b.data(); }
    static C *data(std::basic_string<C, Tr, A> &b) { return b.data(); }
    static std::size_t size(const std::basic_string<C, Tr, A> &b) { return b.size(); }
    static constexpr bool resizable = true;
    static void resize(std::basic_string<C, Tr, A> &b, std::size_t n) { b.resize(n); }
};
template <class T, std::size_t N> struct buffer_traits<std::array<T, N>> {
    using value_type = T;
    static constexpr bool available = has_datatype_v<T>;
    static const T *data(const std::array<T, N> &b) { return b.data(); }
    static T *data(std::array<T, N> &b) { return b.data(); }
    static std::size_t size(const std::array<T, N> &) { return N; }
    static constexpr bool resizable = false;
};
template <class T, std::size_t N> struct buffer_traits<T[N]> {
    using value_type = T;
    static constexpr bool available = has_datatype_v<T>;
    static const T *data(const T (&b)[N]) { return b; }
    static T *data(T (&b)[N]) { return b; }
    static std::size_t size(const T (&)[N]) { return N; }
    static constexpr bool resizable = false;
};
template <class T> struct buffer_traits<view<T>> {
    using value_type = std::remove_cv_t<T>;
    static constexpr bool available = has_datatype_v<T>;
    static T *data(const view<T> &b) { return b.data(); }
    static std::size_t size(const view<T> &b) { return b.size(); }
    static constexpr bool resizable = false;
};

template <class B> using traits_t = buffer_traits<std::remove_cv_t<std::remove_reference_t<B>>>;
template <class B> using value_type_t = typename traits_t<B>::value_type;
template <class B> struct is_view : std::false_type {};
template <class T> struct is_view<view<T>> : std::true_type {};
/// An output buffer is an lvalue or a view (a temporary vector would lose the data).
template <class B>
inline constexpr bool out_ok = std::is_lvalue_reference_v<B> || is_view<std::remove_cv_t<std::remove_reference_t<B>>>::value;

template <class B> const void *send_ptr(const B &b) { return traits_t<B>::data(b); }
template <class B> void *recv_ptr(B &b) {
    auto *p = buffer_traits<std::remove_cv_t<B>>::data(b);
    static_assert(!std::is_const_v<std::remove_pointer_t<decltype(p)>>, "hympi: receive buffer is const");
    return p;
}
template <class B> int count_of(const B &b) { return to_count(traits_t<B>::size(b)); }
template <class B> MPI_Datatype type_of(const B &) { return datatype_of<value_type_t<B>>(); }
/// Resizes a vector to n elements; other buffers must already hold n.
template <class B> void ensure_size(B &b, std::size_t n, const char *what) {
    if constexpr (traits_t<B>::resizable) {
        traits_t<B>::resize(b, n);
    } else {
        if (traits_t<B>::size(b) < n)
            throw error(MPI_ERR_BUFFER, what);
    }
}

} // namespace detail

// ---------------------------------------------------------------------------------------------
// Info
// ---------------------------------------------------------------------------------------------

/// RAII over MPI_Info. A default-constructed info is MPI_INFO_NULL; `set` creates the object
/// on first use.
class info {
public:
    info() noexcept = default;
    /// Non-owning view of a raw handle.
    info(MPI_Info h) noexcept : h_(h) {}
    /// A new info object holding the given (key, value) pairs.
    info(std::initializer_list<std::pair<std::string, std::string>> kv) {
        for (const auto &p : kv)
            set(p.first, p.second);
    }
    /// Takes ownership of a raw handle.
    static info adopt(MPI_Info h) noexcept {
        info i(h);
        i.owned_ = (h != MPI_INFO_NULL);
        return i;
    }
    /// MPI_Info_create.
    static info create() {
        MPI_Info h;
        detail::check(MPI_Info_create(&h), "MPI_Info_create");
        return adopt(h);
    }
    info(info &&o) noexcept : h_(o.h_), owned_(o.owned_) {
        o.h_ = MPI_INFO_NULL;
        o.owned_ = false;
    }
    info &operator=(info &&o) noexcept {
        if (this != &o) {
            reset();
            h_ = o.h_;
            owned_ = o.owned_;
            o.h_ = MPI_INFO_NULL;
            o.owned_ = false;
        }
        return *this;
    }
    info(const info &) = delete;
    info &operator=(const info &) = delete;
    ~info() { reset(); }

    /// MPI_Info_dup (an owned copy; null stays null).
    info dup() const {
        if (h_ == MPI_INFO_NULL)
            return info();
        MPI_Info h;
        detail::check(MPI_Info_dup(h_, &h), "MPI_Info_dup");
        return adopt(h);
    }
    /// MPI_Info_set (creating the object if null).
    void set(const std::string &key, const std::string &value) {
        if (h_ == MPI_INFO_NULL)
            *this = create();
        detail::check(MPI_Info_set(h_, key.c_str(), value.c_str()), "MPI_Info_set");
    }
    /// MPI_Info_get_string: the value of `key`, or nothing.
    /// (Before MPI-4, e.g. Open MPI 4: MPI_Info_get_valuelen and MPI_Info_get.)
    std::optional<std::string> get(const std::string &key) const {
        if (h_ == MPI_INFO_NULL)
            return std::nullopt;
        int flag = 0, len = 0;
#if MPI_VERSION < 4
        detail::check(MPI_Info_get_valuelen(h_, key.c_str(), &len, &flag), "MPI_Info_get_valuelen");
        if (!flag)
            return std::nullopt;
        std::vector<char> value(static_cast<std::size_t>(len) + 1);
        detail::check(MPI_Info_get(h_, key.c_str(), len, value.data(), &flag), "MPI_Info_get");
        return std::string(value.data());
#else
        char dummy[1];
        detail::check(MPI_Info_get_string(h_, key.c_str(), &len, dummy, &flag), "MPI_Info_get_string");
        if (!flag)
            return std::nullopt;
        std::vector<char> buf(static_cast<std::size_t>(len) + 1);
        int buflen = static_cast<int>(buf.size());
        detail::check(MPI_Info_get_string(h_, key.c_str(), &buflen, buf.data(), &flag), "MPI_Info_get_string");
        return std::string(buf.data());
#endif
    }
    /// MPI_Info_delete.
    void erase(const std::string &key) {
        detail::check(MPI_Info_delete(h_, key.c_str()), "MPI_Info_delete");
    }
    /// MPI_Info_get_nkeys (0 for a null info).
    int nkeys() const {
        if (h_ == MPI_INFO_NULL)
            return 0;
        int n = 0;
        detail::check(MPI_Info_get_nkeys(h_, &n), "MPI_Info_get_nkeys");
        return n;
    }
    /// MPI_Info_get_nthkey.
    std::string nth_key(int n) const {
        char buf[MPI_MAX_INFO_KEY];
        detail::check(MPI_Info_get_nthkey(h_, n, buf), "MPI_Info_get_nthkey");
        return buf;
    }
    bool is_null() const noexcept { return h_ == MPI_INFO_NULL; }
    bool owned() const noexcept { return owned_; }
    MPI_Info native() const noexcept { return h_; }
    operator MPI_Info() const noexcept { return h_; }

private:
    void reset() noexcept {
        if (owned_ && h_ != MPI_INFO_NULL)
            MPI_Info_free(&h_); // allowed before MPI_Init and after MPI_Finalize
        h_ = MPI_INFO_NULL;
        owned_ = false;
    }
    MPI_Info h_ = MPI_INFO_NULL;
    bool owned_ = false;
};

// ---------------------------------------------------------------------------------------------
// Groups
// ---------------------------------------------------------------------------------------------

/// RAII over MPI_Group.
class group {
public:
    group() noexcept = default;
    /// Non-owning view of a raw handle.
    group(MPI_Group h) noexcept : h_(h) {}
    /// Takes ownership of a raw handle.
    static group adopt(MPI_Group h) noexcept {
        group g(h);
        g.owned_ = (h != MPI_GROUP_NULL && h != MPI_GROUP_EMPTY);
        return g;
    }
    group(group &&o) noexcept : h_(o.h_), owned_(o.owned_) {
        o.h_ = MPI_GROUP_NULL;
        o.owned_ = false;
    }
    group &operator=(group &&o) noexcept {
        if (this != &o) {
            reset();
            h_ = o.h_;
            owned_ = o.owned_;
            o.h_ = MPI_GROUP_NULL;
            o.owned_ = false;
        }
        return *this;
    }
    group(const group &) = delete;
    group &operator=(const group &) = delete;
    ~group() { reset(); }

    int size() const {
        int n = 0;
        detail::check(MPI_Group_size(h_, &n), "MPI_Group_size");
        return n;
    }
    /// This process's rank in the group, or MPI_UNDEFINED.
    int rank() const {
        int r = 0;
        detail::check(MPI_Group_rank(h_, &r), "MPI_Group_rank");
        return r;
    }
    /// MPI_Group_translate_ranks.
    std::vector<int> translate_ranks(const std::vector<int> &ranks, const group &other) const {
        std::vector<int> out(ranks.size());
        detail::check(MPI_Group_translate_ranks(h_, detail::to_count(ranks.size()), ranks.data(), other.h_, out.data()),
                      "MPI_Group_translate_ranks");
        return out;
    }
    group incl(const std::vector<int> &ranks) const {
        MPI_Group g;
        detail::check(MPI_Group_incl(h_, detail::to_count(ranks.size()), ranks.data(), &g), "MPI_Group_incl");
        return adopt(g);
    }
    group excl(const std::vector<int> &ranks) const {
        MPI_Group g;
        detail::check(MPI_Group_excl(h_, detail::to_count(ranks.size()), ranks.data(), &g), "MPI_Group_excl");
        return adopt(g);
    }
    group union_with(const group &o) const {
        MPI_Group g;
        detail::check(MPI_Group_union(h_, o.h_, &g), "MPI_Group_union");
        return adopt(g);
    }
    group intersection(const group &o) const {
        MPI_Group g;
        detail::check(MPI_Group_intersection(h_, o.h_, &g), "MPI_Group_intersection");
        return adopt(g);
    }
    group difference(const group &o) const {
        MPI_Group g;
        detail::check(MPI_Group_difference(h_, o.h_, &g), "MPI_Group_difference");
        return adopt(g);
    }
    /// MPI_Group_compare: MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL.
    int compare(const group &o) const {
        int r = 0;
        detail::check(MPI_Group_compare(h_, o.h_, &r), "MPI_Group_compare");
        return r;
    }
    bool is_null() const noexcept { return h_ == MPI_GROUP_NULL; }
    bool owned() const noexcept { return owned_; }
    MPI_Group native() const noexcept { return h_; }
    operator MPI_Group() const noexcept { return h_; }

private:
    void reset() noexcept {
        if (owned_ && h_ != MPI_GROUP_NULL && detail::mpi_active())
            MPI_Group_free(&h_);
        h_ = MPI_GROUP_NULL;
        owned_ = false;
    }
    MPI_Group h_ = MPI_GROUP_NULL;
    bool owned_ = false;
};

// ---------------------------------------------------------------------------------------------
// Derived datatypes
// ---------------------------------------------------------------------------------------------

/// RAII over MPI_Datatype: constructors of derived types own (and free) their result; a view
/// of a predefined type frees nothing.
class datatype {
public:
    datatype() noexcept = default;
    /// Non-owning view of a raw handle.
    datatype(MPI_Datatype h) noexcept : h_(h) {}
    /// Takes ownership of a raw (derived) handle.
    static datatype adopt(MPI_Datatype h) noexcept {
        datatype d(h);
        d.owned_ = (h != MPI_DATATYPE_NULL);
        return d;
    }
    /// View of datatype_of<T>().
    template <class T> static datatype of() { return datatype(datatype_of<T>()); }

    /// MPI_Type_contiguous.
    static datatype contiguous(int count, const datatype &old) {
        MPI_Datatype t;
        detail::check(MPI_Type_contiguous(count, old.h_, &t), "MPI_Type_contiguous");
        return adopt(t);
    }
    /// MPI_Type_vector.
    static datatype vector(int count, int blocklength, int stride, const datatype &old) {
        MPI_Datatype t;
        detail::check(MPI_Type_vector(count, blocklength, stride, old.h_, &t), "MPI_Type_vector");
        return adopt(t);
    }
    /// MPI_Type_create_hvector (stride in bytes).
    static datatype hvector(int count, int blocklength, MPI_Aint stride, const datatype &old) {
        MPI_Datatype t;
        detail::check(MPI_Type_create_hvector(count, blocklength, stride, old.h_, &t), "MPI_Type_create_hvector");
        return adopt(t);
    }
    /// MPI_Type_indexed.
    static datatype indexed(const std::vector<int> &blocklengths, const std::vector<int> &displacements,
                            const datatype &old) {
        if (blocklengths.size() != displacements.size())
            throw error(MPI_ERR_ARG, "hympi::datatype::indexed (lengths differ)");
        MPI_Datatype t;
        detail::check(MPI_Type_indexed(detail::to_count(blocklengths.size()), blocklengths.data(),
                                       displacements.data(), old.h_, &t),
                      "MPI_Type_indexed");
        return adopt(t);
    }
    /// MPI_Type_create_struct (displacements in bytes).
    static datatype create_struct(const std::vector<int> &blocklengths, const std::vector<MPI_Aint> &displacements,
                                  const std::vector<MPI_Datatype> &types) {
        if (blocklengths.size() != displacements.size() || blocklengths.size() != types.size())
            throw error(MPI_ERR_ARG, "hympi::datatype::create_struct (lengths differ)");
        MPI_Datatype t;
        detail::check(MPI_Type_create_struct(detail::to_count(blocklengths.size()), blocklengths.data(),
                                             displacements.data(), types.data(), &t),
                      "MPI_Type_create_struct");
        return adopt(t);
    }
    /// MPI_Type_create_subarray: the block `subsizes` starting at `starts` of an array of
    /// `sizes` elements of `old` per dimension (MPI_ORDER_C: the last dimension contiguous, or
    /// MPI_ORDER_FORTRAN). Its extent is the whole array. Not committed.
    static datatype subarray(const std::vector<int> &sizes, const std::vector<int> &subsizes,
                             const std::vector<int> &starts, const datatype &old, int order = MPI_ORDER_C) {
        if (sizes.size() != subsizes.size() || sizes.size() != starts.size())
            throw error(MPI_ERR_ARG, "hympi::datatype::subarray (lengths differ)");
        MPI_Datatype t;
        detail::check(MPI_Type_create_subarray(detail::to_count(sizes.size()), sizes.data(), subsizes.data(),
                                               starts.data(), order, old.h_, &t),
                      "MPI_Type_create_subarray");
        return adopt(t);
    }
    /// MPI_Type_create_resized of this type.
    datatype resized(MPI_Aint lb, MPI_Aint extent) const {
        MPI_Datatype t;
        detail::check(MPI_Type_create_resized(h_, lb, extent, &t), "MPI_Type_create_resized");
        return adopt(t);
    }
    /// MPI_Type_dup.
    datatype dup() const {
        MPI_Datatype t;
        detail::check(MPI_Type_dup(h_, &t), "MPI_Type_dup");
        return adopt(t);
    }
    /// MPI_Type_commit; returns *this for chaining.
    datatype &commit() & {
        detail::check(MPI_Type_commit(&h_), "MPI_Type_commit");
        return *this;
    }
    datatype commit() && {
        detail::check(MPI_Type_commit(&h_), "MPI_Type_commit");
        return std::move(*this);
    }
    /// MPI_Type_size.
    int size() const {
        int s = 0;
        detail::check(MPI_Type_size(h_, &s), "MPI_Type_size");
        return s;
    }
    /// MPI_Type_get_true_extent: {true lb, true extent} (the bytes the type really touches).
    std::pair<MPI_Aint, MPI_Aint> true_extent() const {
        MPI_Aint lb = 0, ext = 0;
        detail::check(MPI_Type_get_true_extent(h_, &lb, &ext), "MPI_Type_get_true_extent");
        return {lb, ext};
    }
    /// MPI_Type_get_extent: {lb, extent}.
    std::pair<MPI_Aint, MPI_Aint> extent() const {
        MPI_Aint lb = 0, ext = 0;
        detail::check(MPI_Type_get_extent(h_, &lb, &ext), "MPI_Type_get_extent");
        return {lb, ext};
    }
    datatype(datatype &&o) noexcept : h_(o.h_), owned_(o.owned_) {
        o.h_ = MPI_DATATYPE_NULL;
        o.owned_ = false;
    }
    datatype &operator=(datatype &&o) noexcept {
        if (this != &o) {
            reset();
            h_ = o.h_;
            owned_ = o.owned_;
            o.h_ = MPI_DATATYPE_NULL;
            o.owned_ = false;
        }
        return *this;
    }
    datatype(const datatype &) = delete;
    datatype &operator=(const datatype &) = delete;
    ~datatype() { reset(); }

    /// Frees an owned type now (MPI_Type_free), throwing on error.
    void free() {
        if (owned_ && h_ != MPI_DATATYPE_NULL)
            detail::check(MPI_Type_free(&h_), "MPI_Type_free");
        h_ = MPI_DATATYPE_NULL;
        owned_ = false;
    }
    /// Keeps the type until MPI_Finalize, which frees it (see at_finalize); returns the handle.
    /// Meant for types held in statics, such as those of type_traits specializations.
    MPI_Datatype free_at_finalize() {
        MPI_Datatype h = h_;
        if (owned_) {
            at_finalize([h]() mutable { MPI_Type_free(&h); });
            owned_ = false;
        }
        return h;
    }
    /// Gives up ownership and returns the handle.
    MPI_Datatype release() noexcept {
        owned_ = false;
        return h_;
    }
    bool is_null() const noexcept { return h_ == MPI_DATATYPE_NULL; }
    bool owned() const noexcept { return owned_; }
    MPI_Datatype native() const noexcept { return h_; }
    operator MPI_Datatype() const noexcept { return h_; }

private:
    void reset() noexcept {
        if (owned_ && h_ != MPI_DATATYPE_NULL && detail::mpi_active())
            MPI_Type_free(&h_);
        h_ = MPI_DATATYPE_NULL;
        owned_ = false;
    }
    MPI_Datatype h_ = MPI_DATATYPE_NULL;
    bool owned_ = false;
};

namespace detail {

/// Throws MPI_ERR_BUFFER (message `what`) unless the bytes `layout` touches from the start of
/// `buf` (its true lower bound and extent) lie inside the container.
template <class B> void check_layout(const B &buf, const datatype &layout, const char *what) {
    const auto [lb, ext] = layout.true_extent();
    const std::size_t bytes = traits_t<B>::size(buf) * sizeof(value_type_t<B>);
    if (lb < 0 || static_cast<std::size_t>(lb) + static_cast<std::size_t>(ext) > bytes)
        throw error(MPI_ERR_BUFFER, what);
}

} // namespace detail

// ---------------------------------------------------------------------------------------------
// Reduction operations
// ---------------------------------------------------------------------------------------------

/// Maximum (MPI_MAX for types MPI allows it on).
struct max {
    template <class T> constexpr T operator()(const T &a, const T &b) const { return a < b ? b : a; }
};
/// Minimum (MPI_MIN).
struct min {
    template <class T> constexpr T operator()(const T &a, const T &b) const { return b < a ? b : a; }
};
/// Logical exclusive or (MPI_LXOR).
struct logical_xor {
    template <class T> constexpr T operator()(const T &a, const T &b) const { return static_cast<T>(!a != !b); }
};
/// Maximum value with the lowest index among equal values (MPI_MAXLOC), on pair types.
struct maxloc {
    template <class P> P operator()(const P &a, const P &b) const {
        auto va = get_value(a), vb = get_value(b);
        if (va > vb)
            return a;
        if (vb > va)
            return b;
        return get_index(a) <= get_index(b) ? a : b;
    }
    template <class T> static T get_value(const std::pair<T, int> &p) { return p.first; }
    template <class T> static T get_value(const value_index<T> &p) { return p.value; }
    template <class T> static int get_index(const std::pair<T, int> &p) { return p.second; }
    template <class T> static int get_index(const value_index<T> &p) { return p.index; }
};
/// Minimum value with the lowest index among equal values (MPI_MINLOC), on pair types.
struct minloc {
    template <class P> P operator()(const P &a, const P &b) const {
        auto va = maxloc::get_value(a), vb = maxloc::get_value(b);
        if (va < vb)
            return a;
        if (vb < va)
            return b;
        return maxloc::get_index(a) <= maxloc::get_index(b) ? a : b;
    }
};

namespace detail {

template <class T> struct is_complex : std::false_type {};
template <class T> struct is_complex<std::complex<T>> : std::true_type {};
template <class T> struct is_pair_type : std::false_type {};
template <class T> struct is_pair_type<std::pair<T, int>> : std::bool_constant<pair_type<T>::available> {};
template <class T> struct is_pair_type<value_index<T>> : std::bool_constant<pair_type<T>::available> {};

// The C integer class of MPI (char, wchar_t and bool are not in it).
template <class T>
inline constexpr bool mpi_integer_v = std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char> &&
                                      !std::is_same_v<T, wchar_t> && has_datatype_v<T>;
template <class T> inline constexpr bool mpi_float_v = std::is_floating_point_v<T>;

/// The predefined MPI op a functor stands for on element type T, or MPI_OP_NULL.
template <class Op, class T> struct predefined_op {
    static MPI_Op get() noexcept { return MPI_OP_NULL; }
};
#define HYMPI_MAP_OP(FUNCTOR, MPIOP, COND)                                                         \
    template <class T> struct predefined_op<FUNCTOR, T> {                                          \
        static MPI_Op get() noexcept { return (COND) ? MPIOP : MPI_OP_NULL; }                      \
    };
#define HYMPI_MAP_STD_OP(NAME, MPIOP, COND)                                                        \
    HYMPI_MAP_OP(std::NAME<T>, MPIOP, COND)                                                        \
    HYMPI_MAP_OP(std::NAME<void>, MPIOP, COND)
HYMPI_MAP_STD_OP(plus, MPI_SUM, mpi_integer_v<T> || mpi_float_v<T> || is_complex<T>::value)
HYMPI_MAP_STD_OP(multiplies, MPI_PROD, mpi_integer_v<T> || mpi_float_v<T> || is_complex<T>::value)
HYMPI_MAP_STD_OP(logical_and, MPI_LAND, mpi_integer_v<T> || (std::is_same_v<T, bool>))
HYMPI_MAP_STD_OP(logical_or, MPI_LOR, mpi_integer_v<T> || (std::is_same_v<T, bool>))
HYMPI_MAP_STD_OP(bit_and, MPI_BAND, mpi_integer_v<T> || (std::is_same_v<T, std::byte>))
HYMPI_MAP_STD_OP(bit_or, MPI_BOR, mpi_integer_v<T> || (std::is_same_v<T, std::byte>))
HYMPI_MAP_STD_OP(bit_xor, MPI_BXOR, mpi_integer_v<T> || (std::is_same_v<T, std::byte>))
HYMPI_MAP_OP(hympi::max, MPI_MAX, mpi_integer_v<T> || mpi_float_v<T>)
HYMPI_MAP_OP(hympi::min, MPI_MIN, mpi_integer_v<T> || mpi_float_v<T>)
HYMPI_MAP_OP(hympi::logical_xor, MPI_LXOR, mpi_integer_v<T> || (std::is_same_v<T, bool>))
HYMPI_MAP_OP(hympi::maxloc, MPI_MAXLOC, is_pair_type<T>::value)
HYMPI_MAP_OP(hympi::minloc, MPI_MINLOC, is_pair_type<T>::value)
#undef HYMPI_MAP_STD_OP
#undef HYMPI_MAP_OP

/// Trampoline of a user op: `inout[i] = f(in[i], inout[i])` (MPI's order: `in` holds the
/// contribution of the lower ranks).
template <class T, class F> struct user_op_fn {
    // Stateful functors are reached through this pointer (set by op::create); an empty
    // functor type is default-constructed instead, so any number of its ops may coexist.
    static inline const F *functor = nullptr;
    static void call(void *in, void *inout, int *len, MPI_Datatype *) noexcept {
        const T *a = static_cast<const T *>(in);
        T *b = static_cast<T *>(inout);
        const int n = *len;
        if constexpr (std::is_empty_v<F> && std::is_default_constructible_v<F>) {
            const F f{};
            for (int i = 0; i < n; ++i)
                b[i] = static_cast<T>(f(a[i], b[i]));
        } else {
            const F &f = *functor;
            for (int i = 0; i < n; ++i)
                b[i] = static_cast<T>(f(a[i], b[i]));
        }
    }
};

} // namespace detail

/// RAII over MPI_Op: a view of a predefined op, or an owned user op made from a functor.
class op {
public:
    op() noexcept = default;
    /// Non-owning view of a raw handle (e.g. MPI_SUM).
    op(MPI_Op h) noexcept : h_(h) {}
    /// A user op over elements of type T computing `inout = f(in, inout)` elementwise, made with
    /// MPI_Op_create. A stateful functor type backs one live op at a time (the latest one
    /// created); an empty functor type (a captureless lambda, std::plus<>) has no such limit.
    /// The op reads its buffers as arrays of T: use it with datatype_of<T>() only.
    template <class T, class F> static op create(F f, bool commutative = true) {
        static_assert(has_datatype_v<T>, "hympi::op::create<T>: T has no MPI datatype");
        using Fn = detail::user_op_fn<T, F>;
        op o;
        auto state = std::make_shared<F>(std::move(f));
        Fn::functor = state.get();
        MPI_Op h;
        detail::check(MPI_Op_create(&Fn::call, commutative ? 1 : 0, &h), "MPI_Op_create");
        o.h_ = h;
        o.owned_ = true;
        o.state_ = std::move(state);
        return o;
    }
    op(op &&o) noexcept : h_(o.h_), owned_(o.owned_), state_(std::move(o.state_)) {
        o.h_ = MPI_OP_NULL;
        o.owned_ = false;
    }
    op &operator=(op &&o) noexcept {
        if (this != &o) {
            reset();
            h_ = o.h_;
            owned_ = o.owned_;
            state_ = std::move(o.state_);
            o.h_ = MPI_OP_NULL;
            o.owned_ = false;
        }
        return *this;
    }
    op(const op &) = delete;
    op &operator=(const op &) = delete;
    ~op() { reset(); }

    /// MPI_Op_commutative.
    bool commutative() const {
        int c = 0;
        detail::check(MPI_Op_commutative(h_, &c), "MPI_Op_commutative");
        return c != 0;
    }
    bool owned() const noexcept { return owned_; }
    MPI_Op native() const noexcept { return h_; }
    operator MPI_Op() const noexcept { return h_; }

private:
    void reset() noexcept {
        if (owned_ && h_ != MPI_OP_NULL && detail::mpi_active())
            MPI_Op_free(&h_);
        h_ = MPI_OP_NULL;
        owned_ = false;
        state_.reset();
    }
    MPI_Op h_ = MPI_OP_NULL;
    bool owned_ = false;
    std::shared_ptr<void> state_;
};

namespace detail {

/// The MPI op for `f` on elements of type T: the op itself for MPI_Op / hympi::op, the
/// predefined op a known functor stands for, else a new user op.
template <class T, class Op> op resolve_op(const Op &f) {
    if constexpr (std::is_same_v<Op, op>) {
        return op(f.native());
    } else if constexpr (std::is_same_v<Op, MPI_Op>) {
        return op(f);
    } else {
        MPI_Op p = predefined_op<Op, T>::get();
        if (p != MPI_OP_NULL)
            return op(p);
        return op::create<T>(f, true);
    }
}

} // namespace detail

// ---------------------------------------------------------------------------------------------
// Status and requests
// ---------------------------------------------------------------------------------------------

/// An MPI_Status with typed accessors.
class status {
public:
    status() noexcept {
        s_.MPI_SOURCE = MPI_ANY_SOURCE;
        s_.MPI_TAG = MPI_ANY_TAG;
        s_.MPI_ERROR = MPI_SUCCESS;
    }
    status(const MPI_Status &s) noexcept : s_(s) {}
    int source() const noexcept { return s_.MPI_SOURCE; }
    int tag() const noexcept { return s_.MPI_TAG; }
    int error() const noexcept { return s_.MPI_ERROR; }
    /// MPI_Get_count in elements of T (MPI_UNDEFINED if not a whole number).
    template <class T> int count() const { return count(datatype_of<T>()); }
    /// MPI_Get_count in elements of `t`.
    int count(MPI_Datatype t) const {
        int n = 0;
        detail::check(MPI_Get_count(&s_, t, &n), "MPI_Get_count");
        return n;
    }
    /// MPI_Test_cancelled.
    bool cancelled() const {
        int f = 0;
        detail::check(MPI_Test_cancelled(&s_, &f), "MPI_Test_cancelled");
        return f != 0;
    }
    MPI_Status &native() noexcept { return s_; }
    const MPI_Status &native() const noexcept { return s_; }

private:
    MPI_Status s_;
};

class request;
inline void waitall(std::vector<request> &reqs);

/// RAII over a nonblocking request. The destructor of an active request waits for it; while an
/// exception unwinds the scope that made it, it cancels it, then waits.
class request {
public:
    request() noexcept = default;
    /// Takes ownership of a raw request.
    explicit request(MPI_Request h) noexcept : h_(h), uncaught_(std::uncaught_exceptions()) {}
    request(request &&o) noexcept : h_(o.h_), uncaught_(o.uncaught_), keep_(std::move(o.keep_)) {
        o.h_ = MPI_REQUEST_NULL;
    }
    request &operator=(request &&o) noexcept {
        if (this != &o) {
            finish();
            h_ = o.h_;
            uncaught_ = o.uncaught_;
            keep_ = std::move(o.keep_);
            o.h_ = MPI_REQUEST_NULL;
        }
        return *this;
    }
    request(const request &) = delete;
    request &operator=(const request &) = delete;
    ~request() { finish(); }

    /// MPI_Wait.
    status wait() {
        status st;
        detail::check(MPI_Wait(&h_, &st.native()), "MPI_Wait");
        keep_.reset();
        return st;
    }
    /// MPI_Test: the status once complete.
    std::optional<status> test() {
        status st;
        int flag = 0;
        detail::check(MPI_Test(&h_, &flag, &st.native()), "MPI_Test");
        if (!flag)
            return std::nullopt;
        keep_.reset();
        return st;
    }
    /// MPI_Cancel (the request must still be waited for).
    void cancel() { detail::check(MPI_Cancel(&h_), "MPI_Cancel"); }
    /// True until the request completed (or for a null request, never).
    bool active() const noexcept { return h_ != MPI_REQUEST_NULL; }
    /// Keeps `p` alive until the request completes (e.g. a user op a collective uses).
    void keep_alive(std::shared_ptr<void> p) {
        if (keep_)
            keep_ = std::make_shared<std::pair<std::shared_ptr<void>, std::shared_ptr<void>>>(std::move(keep_), std::move(p));
        else
            keep_ = std::move(p);
    }
    MPI_Request &native() noexcept { return h_; }
    MPI_Request native() const noexcept { return h_; }

private:
    friend class request_set;
    friend void waitall(std::vector<request> &reqs);
    void finish() noexcept {
        if (h_ != MPI_REQUEST_NULL && detail::mpi_active()) {
            if (std::uncaught_exceptions() > uncaught_)
                MPI_Cancel(&h_);
            MPI_Wait(&h_, MPI_STATUS_IGNORE);
        }
        h_ = MPI_REQUEST_NULL;
        keep_.reset();
    }
    MPI_Request h_ = MPI_REQUEST_NULL;
    int uncaught_ = 0;
    std::shared_ptr<void> keep_;
};

/// A set of requests completed together (MPI_Waitall, MPI_Waitany, MPI_Testall, MPI_Testany).
class request_set {
public:
    request_set() = default;
    /// Adds a request; returns its index.
    std::size_t add(request &&r) {
        reqs_.push_back(std::move(r));
        return reqs_.size() - 1;
    }
    std::size_t size() const noexcept { return reqs_.size(); }
    request &operator[](std::size_t i) noexcept { return reqs_[i]; }
    /// True while some request is active.
    bool active() const noexcept {
        for (const auto &r : reqs_)
            if (r.active())
                return true;
        return false;
    }

    /// MPI_Waitall: every status, in order.
    std::vector<status> waitall() {
        std::vector<MPI_Request> h = handles();
        std::vector<MPI_Status> st(h.size());
        int rc = MPI_Waitall(detail::to_count(h.size()), h.data(), st.data());
        store(h);
        detail::check(rc, "MPI_Waitall");
        return std::vector<status>(st.begin(), st.end());
    }
    /// MPI_Testall: the statuses once all completed.
    std::optional<std::vector<status>> testall() {
        std::vector<MPI_Request> h = handles();
        std::vector<MPI_Status> st(h.size());
        int flag = 0;
        int rc = MPI_Testall(detail::to_count(h.size()), h.data(), &flag, st.data());
        store(h);
        detail::check(rc, "MPI_Testall");
        if (!flag)
            return std::nullopt;
        return std::vector<status>(st.begin(), st.end());
    }
    /// Index and status of a completed request.
    struct completion {
        std::size_t index;
        hympi::status status;
    };
    /// MPI_Waitany: nothing when no request is active.
    std::optional<completion> waitany() {
        std::vector<MPI_Request> h = handles();
        MPI_Status st;
        int idx = MPI_UNDEFINED;
        int rc = MPI_Waitany(detail::to_count(h.size()), h.data(), &idx, &st);
        store(h);
        detail::check(rc, "MPI_Waitany");
        if (idx == MPI_UNDEFINED)
            return std::nullopt;
        return completion{static_cast<std::size_t>(idx), status(st)};
    }
    /// MPI_Testany: a completed request, if one completed now.
    std::optional<completion> testany() {
        std::vector<MPI_Request> h = handles();
        MPI_Status st;
        int idx = MPI_UNDEFINED, flag = 0;
        int rc = MPI_Testany(detail::to_count(h.size()), h.data(), &idx, &flag, &st);
        store(h);
        detail::check(rc, "MPI_Testany");
        if (!flag || idx == MPI_UNDEFINED)
            return std::nullopt;
        return completion{static_cast<std::size_t>(idx), status(st)};
    }

private:
    std::vector<MPI_Request> handles() const {
        std::vector<MPI_Request> h;
        h.reserve(reqs_.size());
        for (const auto &r : reqs_)
            h.push_back(r.h_);
        return h;
    }
    void store(const std::vector<MPI_Request> &h) {
        for (std::size_t i = 0; i < h.size(); ++i) {
            reqs_[i].h_ = h[i];
            if (h[i] == MPI_REQUEST_NULL)
                reqs_[i].keep_.reset();
        }
    }
    std::vector<request> reqs_;
};

/// MPI_Waitall over a vector of requests, statuses ignored (MPI_STATUSES_IGNORE). Every
/// request is inactive afterwards (completed, or left as MPI reports it on error); the vector
/// keeps its elements, so it may be cleared and refilled each iteration without reallocating.
/// Throws hympi::error if MPI_Waitall fails.
inline void waitall(std::vector<request> &reqs) {
    constexpr std::size_t small = 32;
    MPI_Request local[small];
    std::vector<MPI_Request> heap;
    MPI_Request *h = local;
    if (reqs.size() > small) {
        heap.resize(reqs.size());
        h = heap.data();
    }
    for (std::size_t i = 0; i < reqs.size(); ++i)
        h[i] = reqs[i].h_;
    int rc = MPI_Waitall(detail::to_count(reqs.size()), h, MPI_STATUSES_IGNORE);
    for (std::size_t i = 0; i < reqs.size(); ++i) {
        reqs[i].h_ = h[i];
        if (h[i] == MPI_REQUEST_NULL)
            reqs[i].keep_.reset();
    }
    detail::check(rc, "MPI_Waitall");
}

// ---------------------------------------------------------------------------------------------
// Communicators
// ---------------------------------------------------------------------------------------------

/// RAII over MPI_Comm. A comm made from a raw handle is a non-owning view; dup, split and the
/// other constructors return owning comms that MPI_Comm_free their handle when destroyed.
/// Every wrapped communicator gets MPI_ERRORS_RETURN, and failing calls throw hympi::error.
class comm {
public:
    /// MPI_COMM_NULL.
    comm() noexcept = default;
    /// Non-owning view of a raw communicator (sets MPI_ERRORS_RETURN on it).
    comm(MPI_Comm h) : h_(h) { errors_return(); }
    /// Takes ownership of a raw communicator (sets MPI_ERRORS_RETURN on it).
    static comm adopt(MPI_Comm h) {
        comm c(h);
        c.owned_ = (h != MPI_COMM_NULL && h != MPI_COMM_WORLD && h != MPI_COMM_SELF);
        return c;
    }
    /// View of MPI_COMM_WORLD.
    static comm world() { return comm(MPI_COMM_WORLD); }
    /// View of MPI_COMM_SELF.
    static comm self() { return comm(MPI_COMM_SELF); }

    comm(comm &&o) noexcept : h_(o.h_), owned_(o.owned_) {
        o.h_ = MPI_COMM_NULL;
        o.owned_ = false;
    }
    comm &operator=(comm &&o) noexcept {
        if (this != &o) {
            reset();
            h_ = o.h_;
            owned_ = o.owned_;
            o.h_ = MPI_COMM_NULL;
            o.owned_ = false;
        }
        return *this;
    }
    comm(const comm &) = delete;
    comm &operator=(const comm &) = delete;
    ~comm() { reset(); }

    /// A non-owning view of this communicator.
    comm as_view() const noexcept {
        comm c;
        c.h_ = h_;
        return c;
    }
    /// Frees an owned communicator now (MPI_Comm_free), throwing on error.
    void free() {
        if (owned_ && h_ != MPI_COMM_NULL)
            detail::check(MPI_Comm_free(&h_), "MPI_Comm_free");
        h_ = MPI_COMM_NULL;
        owned_ = false;
    }
    /// Gives up ownership and returns the handle.
    MPI_Comm release() noexcept {
        owned_ = false;
        return h_;
    }

    int rank() const {
        int r = 0;
        detail::check(MPI_Comm_rank(h_, &r), "MPI_Comm_rank");
        return r;
    }
    int size() const {
        int n = 0;
        detail::check(MPI_Comm_size(h_, &n), "MPI_Comm_size");
        return n;
    }
    /// MPI_Comm_dup.
    comm dup() const {
        MPI_Comm c;
        detail::check(MPI_Comm_dup(h_, &c), "MPI_Comm_dup");
        return adopt(c);
    }
    /// MPI_Comm_dup_with_info (MPI_Comm_dup for a null info).
    comm dup(const info &hints) const {
        if (hints.is_null())
            return dup();
        MPI_Comm c;
        detail::check(MPI_Comm_dup_with_info(h_, hints.native(), &c), "MPI_Comm_dup_with_info");
        return adopt(c);
    }
    /// MPI_Comm_split (a null comm for color MPI_UNDEFINED).
    comm split(int color, int key = 0) const {
        MPI_Comm c;
        detail::check(MPI_Comm_split(h_, color, key, &c), "MPI_Comm_split");
        return adopt(c);
    }
    /// MPI_Comm_split_type.
    comm split_type(int type, int key = 0, const info &hints = info()) const {
        MPI_Comm c;
        detail::check(MPI_Comm_split_type(h_, type, key, hints.native(), &c), "MPI_Comm_split_type");
        return adopt(c);
    }
    /// MPI_Comm_create (a null comm for processes outside the group).
    comm create(const group &g) const {
        MPI_Comm c;
        detail::check(MPI_Comm_create(h_, g.native(), &c), "MPI_Comm_create");
        return adopt(c);
    }
    /// MPI_Comm_group.
    group get_group() const {
        MPI_Group g;
        detail::check(MPI_Comm_group(h_, &g), "MPI_Comm_group");
        return group::adopt(g);
    }
    /// MPI_Comm_compare: MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR or MPI_UNEQUAL.
    int compare(const comm &o) const {
        int r = 0;
        detail::check(MPI_Comm_compare(h_, o.h_, &r), "MPI_Comm_compare");
        return r;
    }
    /// MPI_Comm_get_info.
    info get_info() const {
        MPI_Info i;
        detail::check(MPI_Comm_get_info(h_, &i), "MPI_Comm_get_info");
        return info::adopt(i);
    }
    /// MPI_Comm_set_info.
    void set_info(const info &hints) const { detail::check(MPI_Comm_set_info(h_, hints.native()), "MPI_Comm_set_info"); }
    /// MPI_Comm_set_name.
    void set_name(const std::string &name) const {
        detail::check(MPI_Comm_set_name(h_, name.c_str()), "MPI_Comm_set_name");
    }
    /// MPI_Comm_get_name.
    std::string name() const {
        char buf[MPI_MAX_OBJECT_NAME];
        int len = 0;
        detail::check(MPI_Comm_get_name(h_, buf, &len), "MPI_Comm_get_name");
        return std::string(buf, static_cast<std::size_t>(len));
    }
    // ---- Cartesian topologies ----

    /// MPI_Cart_create: a Cartesian communicator of dims.size() dimensions (a null comm on the
    /// processes left out). `periods` lists the periodic dimensions (empty: none).
    comm cart_create(const std::vector<int> &dims, const std::vector<bool> &periods = {}, bool reorder = false) const {
        if (!periods.empty() && periods.size() != dims.size())
            throw error(MPI_ERR_ARG, "hympi::comm::cart_create (periods and dims differ in length)");
        std::vector<int> p(dims.size(), 0);
        for (std::size_t d = 0; d < periods.size(); ++d)
            p[d] = periods[d] ? 1 : 0;
        MPI_Comm c;
        detail::check(MPI_Cart_create(h_, detail::to_count(dims.size()), dims.data(), p.data(), reorder ? 1 : 0, &c),
                      "MPI_Cart_create");
        return adopt(c);
    }
    /// MPI_Cartdim_get: the number of dimensions of this Cartesian communicator.
    int cart_dims() const {
        int n = 0;
        detail::check(MPI_Cartdim_get(h_, &n), "MPI_Cartdim_get");
        return n;
    }
    /// MPI_Cart_coords of `rank`.
    std::vector<int> cart_coords(int rank) const {
        std::vector<int> c(static_cast<std::size_t>(cart_dims()));
        detail::check(MPI_Cart_coords(h_, rank, detail::to_count(c.size()), c.data()), "MPI_Cart_coords");
        return c;
    }
    /// MPI_Cart_coords of this process.
    std::vector<int> cart_coords() const { return cart_coords(rank()); }
    /// MPI_Cart_rank: the rank at `coords`.
    int cart_rank(const std::vector<int> &coords) const {
        if (coords.size() != static_cast<std::size_t>(cart_dims()))
            throw error(MPI_ERR_ARG, "hympi::comm::cart_rank (wrong number of coordinates)");
        int r = 0;
        detail::check(MPI_Cart_rank(h_, coords.data(), &r), "MPI_Cart_rank");
        return r;
    }
    /// MPI_Cart_shift: {source, dest}, the neighbours `disp` steps down and up `direction`
    /// (MPI_PROC_NULL beyond a non-periodic edge).
    std::pair<int, int> cart_shift(int direction, int disp = 1) const {
        int source = MPI_PROC_NULL, dest = MPI_PROC_NULL;
        detail::check(MPI_Cart_shift(h_, direction, disp, &source, &dest), "MPI_Cart_shift");
        return {source, dest};
    }

    /// MPI_Abort on this communicator.
    [[noreturn]] void abort(int errorcode) const noexcept {
        MPI_Abort(h_, errorcode);
        std::abort();
    }

    bool is_null() const noexcept { return h_ == MPI_COMM_NULL; }
    explicit operator bool() const noexcept { return h_ != MPI_COMM_NULL; }
    bool owned() const noexcept { return owned_; }
    MPI_Comm native() const noexcept { return h_; }
    operator MPI_Comm() const noexcept { return h_; }

    // ---- point-to-point ----

    /// MPI_Send of a buffer (a value, std::vector, std::array, C array or hympi::view).
    template <class B> void send(const B &buf, int dest, int tag = 0) const {
        detail::check(MPI_Send(detail::send_ptr(buf), detail::count_of(buf), detail::type_of(buf), dest, tag, h_),
                      "MPI_Send");
    }
    /// MPI_Send of `count` elements at `p`.
    template <class T> void send(const T *p, int count, int dest, int tag) const {
        detail::check(MPI_Send(p, count, datatype_of<T>(), dest, tag, h_), "MPI_Send");
    }
    /// MPI_Send with an explicit datatype.
    void send(const void *p, int count, MPI_Datatype type, int dest, int tag) const {
        detail::check(MPI_Send(p, count, type, dest, tag, h_), "MPI_Send");
    }
    /// MPI_Ssend of a buffer.
    template <class B> void ssend(const B &buf, int dest, int tag = 0) const {
        detail::check(MPI_Ssend(detail::send_ptr(buf), detail::count_of(buf), detail::type_of(buf), dest, tag, h_),
                      "MPI_Ssend");
    }
    /// MPI_Recv into a buffer (at most its size in elements).
    template <class B> status recv(B &&buf, int source = MPI_ANY_SOURCE, int tag = MPI_ANY_TAG) const {
        static_assert(detail::out_ok<B>, "hympi: the output buffer must be an lvalue or a hympi::view");
        status st;
        detail::check(MPI_Recv(detail::recv_ptr(buf), detail::count_of(buf), detail::type_of(buf), source, tag, h_,
                               &st.native()),
                      "MPI_Recv");
        return st;
    }
    /// MPI_Recv of at most `count` elements into `p`.
    template <class T> status recv(T *p, int count, int source, int tag) const {
        status st;
        detail::check(MPI_Recv(p, count, datatype_of<T>(), source, tag, h_, &st.native()), "MPI_Recv");
        return st;
    }
    /// MPI_Recv with an explicit datatype.
    status recv(void *p, int count, MPI_Datatype type, int source, int tag) const {
        status st;
        detail::check(MPI_Recv(p, count, type, source, tag, h_, &st.native()), "MPI_Recv");
        return st;
    }
    /// Receives one value of type T.
    template <class T> T recv_value(int source = MPI_ANY_SOURCE, int tag = MPI_ANY_TAG, status *st = nullptr) const {
        T v{};
        status s = recv(v, source, tag);
        if (st)
            *st = s;
        return v;
    }
    /// Receives a whole message of any length into a new vector (MPI_Mprobe + MPI_Mrecv).
    template <class T>
    std::vector<T> recv_vector(int source = MPI_ANY_SOURCE, int tag = MPI_ANY_TAG, status *st = nullptr) const {
        MPI_Message msg;
        status s;
        detail::check(MPI_Mprobe(source, tag, h_, &msg, &s.native()), "MPI_Mprobe");
        int n = s.count<T>();
        if (n == MPI_UNDEFINED)
            n = 0; // let MPI_Mrecv report the mismatch
        std::vector<T> v(static_cast<std::size_t>(n));
        detail::check(MPI_Mrecv(v.data(), n, datatype_of<T>(), &msg, &s.native()), "MPI_Mrecv");
        if (st)
            *st = s;
        return v;
    }
    /// MPI_Isend of a buffer (which must outlive the request).
    template <class B> request isend(B &&buf, int dest, int tag = 0) const {
        static_assert(detail::out_ok<B>, "hympi: the buffer of a nonblocking call must be an lvalue or a hympi::view "
                                         "(it must outlive the request)");
        MPI_Request r;
        detail::check(MPI_Isend(detail::send_ptr(buf), detail::count_of(buf), detail::type_of(buf), dest, tag, h_, &r),
                      "MPI_Isend");
        return request(r);
    }
    /// MPI_Irecv into a buffer (which must outlive the request).
    template <class B> request irecv(B &&buf, int source = MPI_ANY_SOURCE, int tag = MPI_ANY_TAG) const {
        static_assert(detail::out_ok<B>, "hympi: the output buffer must be an lvalue or a hympi::view");
        MPI_Request r;
        detail::check(
            MPI_Irecv(detail::recv_ptr(buf), detail::count_of(buf), detail::type_of(buf), source, tag, h_, &r),
            "MPI_Irecv");
        return request(r);
    }
    /// MPI_Isend of `count` elements of an explicit datatype at `p` (which must outlive the
    /// request).
    request isend(const void *p, int count, MPI_Datatype type, int dest, int tag) const {
        MPI_Request r;
        detail::check(MPI_Isend(p, count, type, dest, tag, h_, &r), "MPI_Isend");
        return request(r);
    }
    /// MPI_Irecv of `count` elements of an explicit datatype into `p` (which must outlive the
    /// request).
    request irecv(void *p, int count, MPI_Datatype type, int source, int tag) const {
        MPI_Request r;
        detail::check(MPI_Irecv(p, count, type, source, tag, h_, &r), "MPI_Irecv");
        return request(r);
    }
    /// MPI_Send of one element of `layout` (e.g. a subarray datatype) laid over the container
    /// `buf` (std::vector, std::array, C array or view). Throws MPI_ERR_BUFFER when the bytes the
    /// layout touches (its true extent) do not lie inside the container.
    template <class B> void send(const B &buf, const datatype &layout, int dest, int tag) const {
        detail::check_layout(buf, layout, "hympi::comm::send (layout outside the buffer)");
        detail::check(MPI_Send(detail::send_ptr(buf), 1, layout.native(), dest, tag, h_), "MPI_Send");
    }
    /// MPI_Recv of one element of `layout` into the container `buf` (checked like send).
    template <class B> status recv(B &&buf, const datatype &layout, int source, int tag) const {
        static_assert(detail::out_ok<B>, "hympi: the output buffer must be an lvalue or a hympi::view");
        detail::check_layout(buf, layout, "hympi::comm::recv (layout outside the buffer)");
        status st;
        detail::check(MPI_Recv(detail::recv_ptr(buf), 1, layout.native(), source, tag, h_, &st.native()), "MPI_Recv");
        return st;
    }
    /// MPI_Isend of one element of `layout` over the container `buf` (checked like send; the
    /// container must outlive the request).
    template <class B> request isend(B &&buf, const datatype &layout, int dest, int tag) const {
        static_assert(detail::out_ok<B>, "hympi: the buffer of a nonblocking call must be an lvalue or a hympi::view "
                                         "(it must outlive the request)");
        detail::check_layout(buf, layout, "hympi::comm::isend (layout outside the buffer)");
        MPI_Request r;
        detail::check(MPI_Isend(detail::send_ptr(buf), 1, layout.native(), dest, tag, h_, &r), "MPI_Isend");
        return request(r);
    }
    /// MPI_Irecv of one element of `layout` into the container `buf` (checked like send; the
    /// container must outlive the request).
    template <class B> request irecv(B &&buf, const datatype &layout, int source, int tag) const {
        static_assert(detail::out_ok<B>, "hympi: the output buffer must be an lvalue or a hympi::view");
        detail::check_layout(buf, layout, "hympi::comm::irecv (layout outside the buffer)");
        MPI_Request r;
        detail::check(MPI_Irecv(detail::recv_ptr(buf), 1, layout.native(), source, tag, h_, &r), "MPI_Irecv");
        return request(r);
    }
    /// MPI_Sendrecv.
    template <class S, class R>
    status sendrecv(const S &sendbuf, int dest, int sendtag, R &&recvbuf, int source, int recvtag) const {
        static_assert(detail::out_ok<R>, "hympi: the output buffer must be an lvalue or a hympi::view");
        status st;
        detail::check(MPI_Sendrecv(detail::send_ptr(sendbuf), detail::count_of(sendbuf), detail::type_of(sendbuf),
                                   dest, sendtag, detail::recv_ptr(recvbuf), detail::count_of(recvbuf),
                                   detail::type_of(recvbuf), source, recvtag, h_, &st.native()),
                      "MPI_Sendrecv");
        return st;
    }
    /// MPI_Probe.
    status probe(int source = MPI_ANY_SOURCE, int tag = MPI_ANY_TAG) const {
        status st;
        detail::check(MPI_Probe(source, tag, h_, &st.native()), "MPI_Probe");
        return st;
    }
    /// MPI_Iprobe: the status of a matching message, if one is there.
    std::optional<status> iprobe(int source = MPI_ANY_SOURCE, int tag = MPI_ANY_TAG) const {
        status st;
        int flag = 0;
        detail::check(MPI_Iprobe(source, tag, h_, &flag, &st.native()), "MPI_Iprobe");
        if (!flag)
            return std::nullopt;
        return st;
    }

    // ---- collectives ----

    /// MPI_Barrier.
    void barrier() const { detail::check(MPI_Barrier(h_), "MPI_Barrier"); }
    /// MPI_Ibarrier.
    request ibarrier() const {
        MPI_Request r;
        detail::check(MPI_Ibarrier(h_, &r), "MPI_Ibarrier");
        return request(r);
    }
    /// MPI_Bcast of a buffer (every rank passes a buffer of the same size).
    template <class B> void bcast(B &&buf, int root) const {
        static_assert(detail::out_ok<B>, "hympi: the output buffer must be an lvalue or a hympi::view");
        detail::check(MPI_Bcast(detail::recv_ptr(buf), detail::count_of(buf), detail::type_of(buf), root, h_),
                      "MPI_Bcast");
    }
    /// MPI_Ibcast (the buffer must outlive the request).
    template <class B> request ibcast(B &&buf, int root) const {
        static_assert(detail::out_ok<B>, "hympi: the output buffer must be an lvalue or a hympi::view");
        MPI_Request r;
        detail::check(MPI_Ibcast(detail::recv_ptr(buf), detail::count_of(buf), detail::type_of(buf), root, h_, &r),
                      "MPI_Ibcast");
        return request(r);
    }
    /// MPI_Reduce: `out` (resized if a vector) matters on the root only.
    template <class B, class R, class Op> void reduce(const B &in, R &&out, const Op &f, int root) const {
        static_assert(detail::out_ok<R>, "hympi: the output buffer must be an lvalue or a hympi::view");
        using T = detail::value_type_t<B>;
        static_assert(std::is_same_v<T, detail::value_type_t<R>>, "hympi::reduce: element types differ");
        const int n = detail::count_of(in);
        void *outp = nullptr;
        if (rank() == root) {
            detail::ensure_size(out, static_cast<std::size_t>(n), "hympi::comm::reduce (output too small)");
            outp = detail::recv_ptr(out);
        }
        op o = detail::resolve_op<T>(f);
        detail::check(MPI_Reduce(detail::send_ptr(in), outp, n, datatype_of<T>(), o.native(), root, h_), "MPI_Reduce");
    }
    /// MPI_Reduce of one value; the result is meaningful on the root.
    template <class T, class Op, class = std::enable_if_t<has_datatype_v<T>>>
    T reduce(const T &value, const Op &f, int root) const {
        T out = value;
        reduce(value, out, f, root);
        return out;
    }
    /// MPI_Allreduce (`out` resized if a vector).
    template <class B, class R, class Op> void allreduce(const B &in, R &&out, const Op &f) const {
        static_assert(detail::out_ok<R>, "hympi: the output buffer must be an lvalue or a hympi::view");
        using T = detail::value_type_t<B>;
        static_assert(std::is_same_v<T, detail::value_type_t<R>>, "hympi::allreduce: element types differ");
        const int n = detail::count_of(in);
        detail::ensure_size(out, static_cast<std::size_t>(n), "hympi::comm::allreduce (output too small)");
        op o = detail::resolve_op<T>(f);
        detail::check(MPI_Allreduce(detail::send_ptr(in), detail::recv_ptr(out), n, datatype_of<T>(), o.native(), h_),
                      "MPI_Allreduce");
    }
    /// MPI_Allreduce returning the result (a value, std::vector or std::array like the input).
    template <class B, class Op, class = std::enable_if_t<!std::is_pointer_v<B> && !std::is_array_v<B>>>
    B allreduce(const B &in, const Op &f) const {
        static_assert(!detail::is_view<B>::value, "hympi::allreduce: pass an output buffer for a view");
        B out = in;
        allreduce(in, out, f);
        return out;
    }
    /// MPI_Allreduce with MPI_IN_PLACE.
    template <class B, class Op> void allreduce_in_place(B &&buf, const Op &f) const {
        static_assert(detail::out_ok<B>, "hympi: the output buffer must be an lvalue or a hympi::view");
        using T = detail::value_type_t<B>;
        op o = detail::resolve_op<T>(f);
        detail::check(MPI_Allreduce(MPI_IN_PLACE, detail::recv_ptr(buf), detail::count_of(buf), datatype_of<T>(),
                                    o.native(), h_),
                      "MPI_Allreduce");
    }
    /// MPI_Iallreduce (`in` and `out` must outlive the request; a user op is kept alive by it).
    template <class B, class R, class Op> request iallreduce(B &&in, R &&out, const Op &f) const {
        static_assert(detail::out_ok<B>, "hympi: the buffer of a nonblocking call must be an lvalue or a hympi::view "
                                         "(it must outlive the request)");
        static_assert(detail::out_ok<R>, "hympi: the output buffer must be an lvalue or a hympi::view");
        using T = detail::value_type_t<B>;
        static_assert(std::is_same_v<T, detail::value_type_t<R>>, "hympi::iallreduce: element types differ");
        const int n = detail::count_of(in);
        detail::ensure_size(out, static_cast<std::size_t>(n), "hympi::comm::iallreduce (output too small)");
        auto o = std::make_shared<op>(detail::resolve_op<T>(f));
        MPI_Request r;
        detail::check(
            MPI_Iallreduce(detail::send_ptr(in), detail::recv_ptr(out), n, datatype_of<T>(), o->native(), h_, &r),
            "MPI_Iallreduce");
        request req(r);
        if (o->owned())
            req.keep_alive(std::move(o));
        return req;
    }
    /// MPI_Scan (`out` resized if a vector).
    template <class B, class R, class Op> void scan(const B &in, R &&out, const Op &f) const {
        static_assert(detail::out_ok<R>, "hympi: the output buffer must be an lvalue or a hympi::view");
        using T = detail::value_type_t<B>;
        const int n = detail::count_of(in);
        detail::ensure_size(out, static_cast<std::size_t>(n), "hympi::comm::scan (output too small)");
        op o = detail::resolve_op<T>(f);
        detail::check(MPI_Scan(detail::send_ptr(in), detail::recv_ptr(out), n, datatype_of<T>(), o.native(), h_),
                      "MPI_Scan");
    }
    /// MPI_Exscan (`out` resized if a vector; undefined on rank 0, as in MPI).
    template <class B, class R, class Op> void exscan(const B &in, R &&out, const Op &f) const {
        static_assert(detail::out_ok<R>, "hympi: the output buffer must be an lvalue or a hympi::view");
        using T = detail::value_type_t<B>;
        const int n = detail::count_of(in);
        detail::ensure_size(out, static_cast<std::size_t>(n), "hympi::comm::exscan (output too small)");
        op o = detail::resolve_op<T>(f);
        detail::check(MPI_Exscan(detail::send_ptr(in), detail::recv_ptr(out), n, datatype_of<T>(), o.native(), h_),
                      "MPI_Exscan");
    }
    /// MPI_Gather: `out` (resized if a vector) gets size() blocks of in's size on the root.
    template <class B, class R> void gather(const B &in, R &&out, int root) const {
        static_assert(detail::out_ok<R>, "hympi: the output buffer must be an lvalue or a hympi::view");
        using T = detail::value_type_t<B>;
        const int n = detail::count_of(in);
        void *outp = nullptr;
        if (rank() == root) {
            detail::ensure_size(out, static_cast<std::size_t>(n) * static_cast<std::size_t>(size()),
                                "hympi::comm::gather (output too small)");
            outp = detail::recv_ptr(out);
        }
        detail::check(MPI_Gather(detail::send_ptr(in), n, datatype_of<T>(), outp, n, datatype_of<T>(), root, h_),
                      "MPI_Gather");
    }
    /// MPI_Gather into a new vector (empty except on the root).
    template <class B> std::vector<detail::value_type_t<B>> gather(const B &in, int root) const {
        std::vector<detail::value_type_t<B>> out;
        gather(in, out, root);
        return out;
    }
    /// MPI_Scatter: each rank gets out's size elements from the root's `in`.
    template <class B, class R> void scatter(const B &in, R &&out, int root) const {
        static_assert(detail::out_ok<R>, "hympi: the output buffer must be an lvalue or a hympi::view");
        using T = detail::value_type_t<R>;
        const int n = detail::count_of(out);
        const void *inp = nullptr;
        if (rank() == root) {
            if (detail::traits_t<B>::size(in) < static_cast<std::size_t>(n) * static_cast<std::size_t>(size()))
                throw error(MPI_ERR_BUFFER, "hympi::comm::scatter (input too small)");
            inp = detail::send_ptr(in);
        }
        detail::check(MPI_Scatter(inp, n, datatype_of<T>(), detail::recv_ptr(out), n, datatype_of<T>(), root, h_),
                      "MPI_Scatter");
    }
    /// MPI_Allgather: `out` (resized if a vector) gets size() blocks of in's size.
    template <class B, class R> void allgather(const B &in, R &&out) const {
        static_assert(detail::out_ok<R>, "hympi: the output buffer must be an lvalue or a hympi::view");
        using T = detail::value_type_t<B>;
        const int n = detail::count_of(in);
        detail::ensure_size(out, static_cast<std::size_t>(n) * static_cast<std::size_t>(size()),
                            "hympi::comm::allgather (output too small)");
        detail::check(
            MPI_Allgather(detail::send_ptr(in), n, datatype_of<T>(), detail::recv_ptr(out), n, datatype_of<T>(), h_),
            "MPI_Allgather");
    }
    /// MPI_Allgather into a new vector.
    template <class B> std::vector<detail::value_type_t<B>> allgather(const B &in) const {
        std::vector<detail::value_type_t<B>> out;
        allgather(in, out);
        return out;
    }
    /// MPI_Alltoall: in holds size() equal blocks; out (resized if a vector) gets as many.
    template <class B, class R> void alltoall(const B &in, R &&out) const {
        static_assert(detail::out_ok<R>, "hympi: the output buffer must be an lvalue or a hympi::view");
        using T = detail::value_type_t<B>;
        const std::size_t p = static_cast<std::size_t>(size());
        const std::size_t total = detail::traits_t<B>::size(in);
        if (total % p != 0)
            throw error(MPI_ERR_COUNT, "hympi::comm::alltoall (input not a multiple of size())");
        const int n = detail::to_count(total / p);
        detail::ensure_size(out, total, "hympi::comm::alltoall (output too small)");
        detail::check(
            MPI_Alltoall(detail::send_ptr(in), n, datatype_of<T>(), detail::recv_ptr(out), n, datatype_of<T>(), h_),
            "MPI_Alltoall");
    }
    /// MPI_Gatherv: counts[i] elements from rank i, packed in rank order into `out` on the root
    /// (resized if a vector). `counts` matters on the root only.
    template <class B, class R> void gatherv(const B &in, R &&out, const std::vector<int> &counts, int root) const {
        static_assert(detail::out_ok<R>, "hympi: the output buffer must be an lvalue or a hympi::view");
        using T = detail::value_type_t<B>;
        std::vector<int> displs;
        void *outp = nullptr;
        if (rank() == root) {
            if (counts.size() != static_cast<std::size_t>(size()))
                throw error(MPI_ERR_COUNT, "hympi::comm::gatherv (counts must have size() entries)");
            displs = displacements(counts);
            detail::ensure_size(out, total(counts), "hympi::comm::gatherv (output too small)");
            outp = detail::recv_ptr(out);
        }
        detail::check(MPI_Gatherv(detail::send_ptr(in), detail::count_of(in), datatype_of<T>(), outp,
                                  counts.empty() ? nullptr : counts.data(), displs.empty() ? nullptr : displs.data(),
                                  datatype_of<T>(), root, h_),
                      "MPI_Gatherv");
    }
    /// MPI_Scatterv: rank i gets counts[i] elements of the root's `in` (packed in rank order);
    /// `out` is resized to counts[rank] if a vector. Every rank passes the same counts.
    template <class B, class R> void scatterv(const B &in, const std::vector<int> &counts, R &&out, int root) const {
        static_assert(detail::out_ok<R>, "hympi: the output buffer must be an lvalue or a hympi::view");
        using T = detail::value_type_t<R>;
        const int me = rank();
        if (counts.size() != static_cast<std::size_t>(size()))
            throw error(MPI_ERR_COUNT, "hympi::comm::scatterv (counts must have size() entries)");
        detail::ensure_size(out, static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]),
                            "hympi::comm::scatterv (output too small)");
        std::vector<int> displs = displacements(counts);
        const void *inp = me == root ? detail::send_ptr(in) : nullptr;
        detail::check(MPI_Scatterv(inp, counts.data(), displs.data(), datatype_of<T>(), detail::recv_ptr(out),
                                   counts[static_cast<std::size_t>(me)], datatype_of<T>(), root, h_),
                      "MPI_Scatterv");
    }
    /// MPI_Allgatherv: every rank's `in` (of any length) concatenated in rank order; the counts
    /// are exchanged first. Returns the counts.
    template <class B, class R> std::vector<int> allgatherv(const B &in, R &&out) const {
        static_assert(detail::out_ok<R>, "hympi: the output buffer must be an lvalue or a hympi::view");
        using T = detail::value_type_t<B>;
        int n = detail::count_of(in);
        std::vector<int> counts = allgather(n);
        std::vector<int> displs = displacements(counts);
        detail::ensure_size(out, total(counts), "hympi::comm::allgatherv (output too small)");
        detail::check(MPI_Allgatherv(detail::send_ptr(in), n, datatype_of<T>(), detail::recv_ptr(out), counts.data(),
                                     displs.data(), datatype_of<T>(), h_),
                      "MPI_Allgatherv");
        return counts;
    }
    /// MPI_Alltoallv: sendcounts[i] elements (packed in rank order) go to rank i; what arrives
    /// is packed in rank order into `out` (resized if a vector). The receive counts are exchanged
    /// first (MPI_Alltoall) and returned.
    template <class B, class R> std::vector<int> alltoallv(const B &in, const std::vector<int> &sendcounts, R &&out) const {
        static_assert(detail::out_ok<R>, "hympi: the output buffer must be an lvalue or a hympi::view");
        using T = detail::value_type_t<B>;
        if (sendcounts.size() != static_cast<std::size_t>(size()))
            throw error(MPI_ERR_COUNT, "hympi::comm::alltoallv (sendcounts must have size() entries)");
        std::vector<int> recvcounts;
        alltoall(sendcounts, recvcounts);
        std::vector<int> sdispls = displacements(sendcounts), rdispls = displacements(recvcounts);
        detail::ensure_size(out, total(recvcounts), "hympi::comm::alltoallv (output too small)");
        detail::check(MPI_Alltoallv(detail::send_ptr(in), sendcounts.data(), sdispls.data(), datatype_of<T>(),
                                    detail::recv_ptr(out), recvcounts.data(), rdispls.data(), datatype_of<T>(), h_),
                      "MPI_Alltoallv");
        return recvcounts;
    }

private:
    static std::vector<int> displacements(const std::vector<int> &counts) {
        std::vector<int> d(counts.size());
        long long acc = 0;
        for (std::size_t i = 0; i < counts.size(); ++i) {
            d[i] = detail::to_count(static_cast<std::size_t>(acc));
            acc += counts[i];
        }
        return d;
    }
    static std::size_t total(const std::vector<int> &counts) {
        std::size_t t = 0;
        for (int c : counts)
            t += static_cast<std::size_t>(c);
        return t;
    }
    void errors_return() {
        if (h_ != MPI_COMM_NULL)
            detail::check(MPI_Comm_set_errhandler(h_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    }
    void reset() noexcept {
        if (owned_ && h_ != MPI_COMM_NULL && detail::mpi_active())
            MPI_Comm_free(&h_);
        h_ = MPI_COMM_NULL;
        owned_ = false;
    }
    MPI_Comm h_ = MPI_COMM_NULL;
    bool owned_ = false;
};

/// MPI_Dims_create: a balanced grid of `nnodes` processes over dims.size() dimensions; the
/// nonzero entries of `dims` are kept as given.
inline std::vector<int> dims_create(int nnodes, std::vector<int> dims) {
    detail::check(MPI_Dims_create(nnodes, detail::to_count(dims.size()), dims.data()), "MPI_Dims_create");
    return dims;
}
/// MPI_Dims_create over `ndims` free dimensions.
inline std::vector<int> dims_create(int nnodes, int ndims) {
    if (ndims < 0)
        throw error(MPI_ERR_DIMS, "hympi::dims_create (negative ndims)");
    return dims_create(nnodes, std::vector<int>(static_cast<std::size_t>(ndims), 0));
}

// ---------------------------------------------------------------------------------------------
// Region hints
// ---------------------------------------------------------------------------------------------

/// Assertions about how a region's code uses a communicator, combined with `|` and turned into
/// info keys by region_hints (the same flags as hympi.h's MPIX_HINT_*).
enum class hint : unsigned {
    none = 0,
    no_any_source = 0x1,    ///< never receives with MPI_ANY_SOURCE (mpi_assert_no_any_source)
    no_any_tag = 0x2,       ///< never receives with MPI_ANY_TAG (mpi_assert_no_any_tag)
    allow_overtaking = 0x4, ///< does not rely on non-overtaking order (mpi_assert_allow_overtaking)
    exact_length = 0x8,     ///< every receive posts the exact message size (mpi_assert_exact_length)
    per_thread = 0x10,      ///< one thread per process uses it (hympi_per_thread_comm)
};
constexpr hint operator|(hint a, hint b) noexcept {
    return static_cast<hint>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
constexpr bool operator&(hint a, hint b) noexcept { return (static_cast<unsigned>(a) & static_cast<unsigned>(b)) != 0; }

/// A new info object holding "true" for the key of every flag in `flags`, for comm::dup(info),
/// comm::set_info or omp::thread_comm. Other MPI libraries ignore the keys they do not know.
inline info region_hints(hint flags) {
    static const std::pair<hint, const char *> keys[] = {
        {hint::no_any_source, "mpi_assert_no_any_source"},
        {hint::no_any_tag, "mpi_assert_no_any_tag"},
        {hint::allow_overtaking, "mpi_assert_allow_overtaking"},
        {hint::exact_length, "mpi_assert_exact_length"},
        {hint::per_thread, "hympi_per_thread_comm"},
    };
    unsigned known = 0;
    for (const auto &k : keys)
        known |= static_cast<unsigned>(k.first);
    if ((static_cast<unsigned>(flags) & ~known) != 0)
        throw error(MPI_ERR_ARG, "hympi::region_hints (unknown flag)");
    info i = info::create();
    for (const auto &k : keys)
        if (flags & k.first)
            i.set(k.second, "true");
    return i;
}

// ---------------------------------------------------------------------------------------------
// OpenMP helpers
// ---------------------------------------------------------------------------------------------

#ifdef _OPENMP
namespace omp {

/// Called by every thread of an OpenMP team (inside `#pragma omp parallel`): returns this
/// thread's own duplicate of `parent`, with `hints` applied (MPI_Comm_dup_with_info; e.g.
/// mpi_assert_no_any_source, mpi_assert_no_any_tag, mpi_assert_allow_overtaking).
///
/// The team's master thread makes one duplicate per thread, in thread order, so that the same
/// thread number gets the matching communicator on every rank (every rank must run a team of
/// the same size); then, after a team barrier, each thread takes its own. Only the master
/// thread calls MPI, so MPI_THREAD_FUNNELED suffices for the call itself (using the
/// communicators from several threads at once needs MPI_THREAD_MULTIPLE). The caller owns the
/// result. If the duplication fails, every thread throws the error.
inline comm thread_comm(const comm &parent, const info &hints = info()) {
    struct shared_state {
        std::vector<MPI_Comm> comms;
        int rc = MPI_SUCCESS;
    };
    std::shared_ptr<shared_state> state;
    // One thread allocates the state and hands it to the team (the end of `single` is a barrier).
#pragma omp single copyprivate(state)
    state = std::make_shared<shared_state>();
    const int nthreads = omp_get_num_threads();
    const int me = omp_get_thread_num();
#pragma omp master
    {
        state->comms.assign(static_cast<std::size_t>(nthreads), MPI_COMM_NULL);
        for (int t = 0; t < nthreads && state->rc == MPI_SUCCESS; ++t) {
            MPI_Comm *c = &state->comms[static_cast<std::size_t>(t)];
            state->rc = hints.is_null() ? MPI_Comm_dup(parent.native(), c)
                                        : MPI_Comm_dup_with_info(parent.native(), hints.native(), c);
        }
        if (state->rc != MPI_SUCCESS) {
            for (MPI_Comm &c : state->comms)
                if (c != MPI_COMM_NULL)
                    MPI_Comm_free(&c);
        }
    }
#pragma omp barrier
    if (state->rc != MPI_SUCCESS)
        throw error(state->rc, "hympi::omp::thread_comm (MPI_Comm_dup_with_info)");
    return comm::adopt(state->comms[static_cast<std::size_t>(me)]);
}

} // namespace omp
#endif

} // namespace hympi

#endif // HYMPI_HPP_INCLUDED
