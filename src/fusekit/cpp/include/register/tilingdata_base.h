// CANN's TilingData definition macros, for fusekit (written for fusekit from the CANN documentation "TilingData
// 结构定义": BEGIN_TILING_DATA_DEF, TILING_DATA_FIELD_DEF, TILING_DATA_FIELD_DEF_ARR, TILING_DATA_FIELD_DEF_STRUCT,
// END_TILING_DATA_DEF, REGISTER_TILING_DATA_CLASS; not a CANN header).
//
// The same header serves the host (set_x / get_x, SaveToBuffer, GetDataSize) and the kernel (GET_TILING_DATA
// reads the fields by name): one struct, its fields in the declared order at their natural alignment, so the
// bytes the host saves are the struct the kernel reads.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#define BEGIN_TILING_DATA_DEF(name) struct name {
#define TILING_DATA_FIELD_DEF(type, field) \
    type field = type();                   \
    void set_##field(type value) { field = value; } \
    type get_##field() const { return field; }
#define TILING_DATA_FIELD_DEF_ARR(type, count, field) \
    type field[count] = {};                           \
    void set_##field(const type* values) { std::memcpy(field, values, sizeof(field)); } \
    const type* get_##field() const { return field; }
#define TILING_DATA_FIELD_DEF_STRUCT(type, field) type field;
#define END_TILING_DATA_DEF                                                                  \
    void SaveToBuffer(void* buffer, size_t capacity) const {                                 \
        std::memcpy(buffer, this, sizeof(*this) < capacity ? sizeof(*this) : capacity);      \
    }                                                                                        \
    size_t GetDataSize() const { return sizeof(*this); }                                     \
    }
// one operator per project: its tiling struct is the one GET_TILING_DATA reads
#define REGISTER_TILING_DATA_CLASS(op, cls) using fusekit_registered_tiling = cls;
