// Eigen's Tensor module with its thread-pool support switched on. Every file
// of this backend includes Eigen through here so EIGEN_USE_THREADS is defined
// the same way in all of them (the Tensor templates differ with and without it).
#pragma once

#ifndef EIGEN_USE_THREADS
#define EIGEN_USE_THREADS
#endif
#include <unsupported/Eigen/CXX11/Tensor>
#include <unsupported/Eigen/CXX11/ThreadPool>
