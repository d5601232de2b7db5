// The file helpers Ascend C's example programs call (ReadFile, WriteFile), for programs that do not bring their
// own data_utils.h (an example's own, next to its source, is found first). Written for fusekit.
#pragma once
#include <cstdio>
#include <fstream>
#include <string>

// Read filePath into buffer (at most bufferSize bytes); fileSize is set to the bytes read. False (and a line on
// stdout) when the file is missing, empty or larger than the buffer.
inline bool ReadFile(const std::string& filePath, size_t& fileSize, void* buffer, size_t bufferSize) {
    std::ifstream file(filePath, std::ios::binary | std::ios::ate);
    if (!file) {
        std::printf("[ERROR] cannot open %s\n", filePath.c_str());
        return false;
    }
    size_t size = static_cast<size_t>(file.tellg());
    if (size == 0 || size > bufferSize) {
        std::printf("[ERROR] %s has %zu bytes; the buffer takes 1 to %zu\n", filePath.c_str(), size, bufferSize);
        return false;
    }
    file.seekg(0);
    file.read(static_cast<char*>(buffer), static_cast<std::streamsize>(size));
    fileSize = size;
    return bool(file);
}

// Write size bytes of buffer to filePath (replacing it). False (and a line on stdout) when it cannot.
inline bool WriteFile(const std::string& filePath, const void* buffer, size_t size) {
    std::ofstream file(filePath, std::ios::binary | std::ios::trunc);
    if (buffer == nullptr || !file.write(static_cast<const char*>(buffer), static_cast<std::streamsize>(size))) {
        std::printf("[ERROR] cannot write %s\n", filePath.c_str());
        return false;
    }
    return true;
}
