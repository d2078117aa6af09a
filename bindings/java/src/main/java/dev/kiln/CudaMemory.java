package dev.kiln;

/**
 * Where a buffer of a "cuda" client lies in GPU memory ({@link Buffer#cudaMemory()}): the GPU's
 * CUDA device ordinal and the {@code CUdeviceptr} of its row-major bytes (0 for an array without
 * elements).
 *
 * @param ordinal the GPU's CUDA device ordinal
 * @param address the device address of the first byte
 */
public record CudaMemory(int ordinal, long address) {}
