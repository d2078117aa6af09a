// Tests of .npy reading and writing: every dtype in both byte orders, C and
// Fortran order, 0-d and empty arrays, format versions, and every kind of
// malformed file.
#include "core/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/literal.h"
#include "core/npy_header.h"
#include "core/resource_limits.h"

// Fails the test when a Status is not OK, printing it.
#define NPY_ASSERT_OK(expr)                                  \
  do {                                                       \
    const ::kiln::Status npy_status_ = (expr);               \
    ASSERT_TRUE(npy_status_.ok()) << npy_status_.ToString(); \
  } while (0)

namespace kiln {
namespace {

// A .npy file with the given header dict text, padded like NumPy pads it.
std::vector<uint8_t> MakeNpy(const std::string& dict, const std::vector<uint8_t>& data, int major = 1) {
  const size_t length_bytes = major == 1 ? 2 : 4;
  std::string header = dict;
  const size_t preamble = 8 + length_bytes;
  while ((preamble + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  for (size_t i = 0; i < length_bytes; ++i) bytes.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

std::string Dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

// The bytes of `values`, each element's bytes (each component's, for complex)
// reversed when `big_endian`.
template <typename T>
std::vector<uint8_t> Bytes(const std::vector<T>& values, bool big_endian) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  if (big_endian) {
    size_t unit = sizeof(T);
    if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) unit /= 2;
    for (size_t i = 0; i < bytes.size(); i += unit) std::reverse(bytes.begin() + i, bytes.begin() + i + unit);
  }
  return bytes;
}

template <typename T>
void ExpectReadsBothOrders(const std::string& code, const std::vector<T>& values) {
  const Literal expected = Literal::FromVector(values, {2, 2});
  for (const bool big : {false, true}) {
    const std::string descr = std::string(big ? ">" : "<") + code;
    const auto file = MakeNpy(Dict(descr, "(2, 2)"), Bytes(values, big));
    StatusOr<Literal> read = ReadNpy(file, "x.npy");
    ASSERT_TRUE(read.ok()) << descr << ": " << read.status().ToString();
    EXPECT_EQ(*read, expected) << descr << ": " << read->ToString();
  }
}

TEST(NpyReadTest, EveryDtypeInBothByteOrders) {
  ExpectReadsBothOrders<int8_t>("i1", {-1, 2, -128, 127});
  ExpectReadsBothOrders<int16_t>("i2", {-1, 2, -32768, 0x1234});
  ExpectReadsBothOrders<int32_t>("i4", {-1, 2, 0x12345678, -7});
  ExpectReadsBothOrders<int64_t>("i8", {-1, 2, 0x123456789abcdef0, -7});
  ExpectReadsBothOrders<uint8_t>("u1", {1, 2, 255, 0});
  ExpectReadsBothOrders<uint16_t>("u2", {1, 2, 0xfffe, 0x1234});
  ExpectReadsBothOrders<uint32_t>("u4", {1, 2, 0xfffffffe, 0x12345678});
  ExpectReadsBothOrders<uint64_t>("u8", {1, 2, 0xfffffffffffffffe, 0x0102030405060708});
  ExpectReadsBothOrders<half>("f2", {half(1.5f), half(-2.0f), half(65504.0f), half(0.0009765625f)});
  ExpectReadsBothOrders<float>("f4", {1.5f, -2.25f, 3e38f, 1e-38f});
  ExpectReadsBothOrders<double>("f8", {1.5, -2.25, 1e300, 1e-300});
  ExpectReadsBothOrders<complex64>("c8", {{1, 2}, {-3, 4.5f}, {0, -1}, {7, 0}});
  ExpectReadsBothOrders<complex128>("c16", {{1, 2}, {-3, 4.5}, {0, -1}, {7, 0}});
}

TEST(NpyReadTest, OneByteTypesWithoutByteOrderAndNativeOrder) {
  auto read = ReadNpy(MakeNpy(Dict("|b1", "(3,)"), {1, 0, 1}), "b.npy");
  NPY_ASSERT_OK(read.status());
  EXPECT_EQ(*read, Literal::FromVector<bool>({true, false, true}));
  read = ReadNpy(MakeNpy(Dict("|i1", "(2,)"), {0xff, 5}), "i.npy");
  NPY_ASSERT_OK(read.status());
  EXPECT_EQ(*read, Literal::FromVector<int8_t>({-1, 5}));
  read = ReadNpy(MakeNpy(Dict("=i4", "(1,)"), Bytes<int32_t>({77}, false)), "n.npy");
  NPY_ASSERT_OK(read.status());
  EXPECT_EQ(*read, Literal::FromVector<int32_t>({77}));
}

TEST(NpyReadTest, BoolBytesOtherThanOneAreTrue) {
  auto read = ReadNpy(MakeNpy(Dict("|b1", "(3,)"), {0, 2, 255}), "b.npy");
  NPY_ASSERT_OK(read.status());
  EXPECT_EQ(read->raw()[1], 1);
  EXPECT_EQ(*read, Literal::FromVector<bool>({false, true, true}));
}

TEST(NpyReadTest, FortranOrderIsConvertedToRowMajor) {
  // Column-major 2x3: columns {1,4}, {2,5}, {3,6}.
  auto read = ReadNpy(MakeNpy(Dict("<f4", "(2, 3)", true), Bytes<float>({1, 4, 2, 5, 3, 6}, false)), "f.npy");
  NPY_ASSERT_OK(read.status());
  EXPECT_EQ(*read, Literal::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));

  // 2x3x4 big-endian: element (i,j,k) = 100i + 10j + k, stored with i fastest.
  std::vector<int16_t> column_major, row_major;
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) column_major.push_back(static_cast<int16_t>(100 * i + 10 * j + k));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) row_major.push_back(static_cast<int16_t>(100 * i + 10 * j + k));
  read = ReadNpy(MakeNpy(Dict(">i2", "(2, 3, 4)", true), Bytes(column_major, true)), "f3.npy");
  NPY_ASSERT_OK(read.status());
  EXPECT_EQ(*read, Literal::FromVector(row_major, {2, 3, 4}));
}

TEST(NpyReadTest, FortranOrderOfOneDimensionAndEmptyArrays) {
  auto read = ReadNpy(MakeNpy(Dict("<i4", "(3,)", true), Bytes<int32_t>({1, 2, 3}, false)), "f.npy");
  NPY_ASSERT_OK(read.status());
  EXPECT_EQ(*read, Literal::FromVector<int32_t>({1, 2, 3}));
  read = ReadNpy(MakeNpy(Dict("<i4", "(0, 3)", true), {}), "e.npy");
  NPY_ASSERT_OK(read.status());
  EXPECT_EQ(read->shape().ToString(), "s32[0,3]");
}

TEST(NpyReadTest, ScalarAndEmptyArrays) {
  auto read = ReadNpy(MakeNpy(Dict("<f8", "()"), Bytes<double>({2.5}, false)), "s.npy");
  NPY_ASSERT_OK(read.status());
  EXPECT_EQ(*read, Literal::Scalar(2.5));
  read = ReadNpy(MakeNpy(Dict("<f4", "(0,)"), {}), "e.npy");
  NPY_ASSERT_OK(read.status());
  EXPECT_EQ(read->shape().ToString(), "f32[0]");
  // A zero dimension makes the array empty however large the others are.
  read = ReadNpy(MakeNpy(Dict("<u1", "(4611686018427387904, 0)"), {}), "big.npy");
  NPY_ASSERT_OK(read.status());
  EXPECT_EQ(read->element_count(), 0);
}

TEST(NpyReadTest, FormatVersions2And3AndHeaderVariants) {
  for (int major : {2, 3}) {
    auto read = ReadNpy(MakeNpy(Dict("<u2", "(2,)"), Bytes<uint16_t>({7, 9}, false), major), "v.npy");
    NPY_ASSERT_OK(read.status());
    EXPECT_EQ(*read, Literal::FromVector<uint16_t>({7, 9}));
  }
  // Double quotes, keys in another order, no trailing comma, Python 2 long suffix.
  auto read = ReadNpy(MakeNpy("{\"shape\": (2L,), \"fortran_order\": False, \"descr\": \"<i8\"}",
                              Bytes<int64_t>({5, 6}, false)),
                      "q.npy");
  NPY_ASSERT_OK(read.status());
  EXPECT_EQ(*read, Literal::FromVector<int64_t>({5, 6}));
}

TEST(NpyReadTest, V2IsBf16OnlyWhenExpected) {
  const std::vector<bfloat16> values = {bfloat16(1.0f), bfloat16(-2.5f)};
  const auto file = MakeNpy(Dict("<V2", "(2,)"), Bytes(values, false));
  auto read = ReadNpy(file, "bf.npy", ElementType::kBF16);
  NPY_ASSERT_OK(read.status());
  EXPECT_EQ(*read, Literal::FromVector(values));
  read = ReadNpy(MakeNpy(Dict("|V2", "(2,)"), Bytes(values, false)), "bf.npy", ElementType::kBF16);
  NPY_ASSERT_OK(read.status());
  EXPECT_EQ(*read, Literal::FromVector(values));
  read = ReadNpy(file, "bf.npy");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(read.status().message().find("bf16"), std::string::npos) << read.status().message();
  read = ReadNpy(file, "bf.npy", ElementType::kF16);
  EXPECT_FALSE(read.ok());
}

template <typename T>
void ExpectRoundTrip(const std::vector<T>& values, std::vector<int64_t> dims) {
  const Literal literal = Literal::FromVector(values, dims);
  const std::vector<uint8_t> bytes = WriteNpy(literal);
  ASSERT_FALSE(bytes.empty());
  // The data starts on a 64-byte boundary, as NumPy writes it.
  const size_t header_length = bytes[8] | (bytes[9] << 8);
  EXPECT_EQ((10 + header_length) % 64, 0u);
  EXPECT_EQ(bytes[10 + header_length - 1], '\n');
  StatusOr<Literal> read = ReadNpy(bytes, "rt.npy", literal.shape().element_type());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, literal) << read->ToString();
}

TEST(NpyWriteTest, RoundTripsEveryElementType) {
  ExpectRoundTrip<bool>({true, false, true, true}, {2, 2});
  ExpectRoundTrip<int8_t>({-1, 2}, {2});
  ExpectRoundTrip<int16_t>({-1, 2}, {2, 1});
  ExpectRoundTrip<int32_t>({-1, 2, 3}, {3});
  ExpectRoundTrip<int64_t>({-1, 2}, {1, 2});
  ExpectRoundTrip<uint8_t>({1, 255}, {2});
  ExpectRoundTrip<uint16_t>({1, 65535}, {2});
  ExpectRoundTrip<uint32_t>({1, 4000000000u}, {2});
  ExpectRoundTrip<uint64_t>({1, 18000000000000000000u}, {2});
  ExpectRoundTrip<half>({half(1.5f), half(-3.0f)}, {2});
  ExpectRoundTrip<bfloat16>({bfloat16(1.5f), bfloat16(-3.0f)}, {2});
  ExpectRoundTrip<float>({1.5f, -3.0f, 0.25f, 8.0f, 9.0f, 10.0f}, {2, 3});
  ExpectRoundTrip<double>({1.5, -3.0}, {2});
  ExpectRoundTrip<complex64>({{1, 2}, {3, 4}}, {2});
  ExpectRoundTrip<complex128>({{1, 2}, {3, 4}}, {2});
}

TEST(NpyWriteTest, WritesTheHeaderNumPyWrites) {
  const std::vector<uint8_t> bytes = WriteNpy(Literal::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  const std::string header(bytes.begin() + 10, bytes.begin() + 128);
  EXPECT_EQ(header.substr(0, header.find_last_not_of(" \n") + 1),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(bytes.size(), 128u + 24u);
  EXPECT_EQ(bytes[6], 1);
  EXPECT_EQ(bytes[7], 0);

  const std::string descr_of_bf16(
      reinterpret_cast<const char*>(WriteNpy(Literal::Scalar(bfloat16(1.0f))).data()) + 10, 40);
  EXPECT_NE(descr_of_bf16.find("'descr': '<V2'"), std::string::npos) << descr_of_bf16;
  const std::vector<uint8_t> scalar = WriteNpy(Literal::Scalar<int32_t>(7));
  EXPECT_NE(std::string(scalar.begin(), scalar.end()).find("'shape': ()"), std::string::npos);
  const std::vector<uint8_t> vector = WriteNpy(Literal::FromVector<int32_t>({7}));
  EXPECT_NE(std::string(vector.begin(), vector.end()).find("'shape': (1,)"), std::string::npos);
}

TEST(NpyWriteTest, ScalarAndEmptyRoundTrip) {
  for (const Literal& literal : {Literal::Scalar<int16_t>(-5), Literal(Shape(ElementType::kF32, {0, 4})),
                                 Literal(Shape(ElementType::kPred, {3, 0}))}) {
    StatusOr<Literal> read = ReadNpy(WriteNpy(literal), "s.npy");
    NPY_ASSERT_OK(read.status());
    EXPECT_EQ(*read, literal);
  }
}

TEST(NpyWriteTest, LongHeaderUsesVersion2) {
  const Literal literal(Shape(ElementType::kU8, std::vector<int64_t>(30000, 1)));
  const std::vector<uint8_t> bytes = WriteNpy(literal);
  ASSERT_GT(bytes.size(), 12u);
  EXPECT_EQ(bytes[6], 2);
  StatusOr<Literal> read = ReadNpy(bytes, "long.npy");
  NPY_ASSERT_OK(read.status());
  EXPECT_EQ(read->shape().rank(), 30000);
}

TEST(NpyHeaderTest, FormattedHeaderReadsBackWhateverDescrHolds) {
  // A descr with a quote once formatted to text that did not parse (found by
  // tests/fuzz/npy_header_fuzz.cc; corpus/npy_header/quote_in_descr.txt).
  for (const std::string descr : {"<f4", "<f'4", "a\\b", "'", "\\", "\"x'y\\'"}) {
    const NpyHeader header{descr, true, {2, 0, 3}};
    const std::string text = FormatNpyHeader(header);
    StatusOr<NpyHeader> read = ParseNpyHeader(text);
    NPY_ASSERT_OK(read.status());
    EXPECT_EQ(read->descr, descr) << text;
    EXPECT_TRUE(read->fortran_order);
    EXPECT_EQ(read->shape, header.shape);
  }
  EXPECT_EQ(FormatNpyHeader({"<f'4", false, {1}}),
            "{'descr': '<f\\'4', 'fortran_order': False, 'shape': (1,), }");
}

TEST(NpyWriteTest, TupleCannotBeWritten) {
  const Literal tuple = Literal::Tuple({Literal::Scalar<float>(1)});
  EXPECT_TRUE(WriteNpy(tuple).empty());
  const Status status = WriteNpyFile(tuple, "never_written.npy");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists("never_written.npy"));
}

// Expects `bytes` to be refused with `code` and a message naming the file and
// containing `needle`.
void ExpectRefused(const std::vector<uint8_t>& bytes, StatusCode code, const std::string& needle) {
  StatusOr<Literal> read = ReadNpy(bytes, "bad.npy");
  ASSERT_FALSE(read.ok()) << "accepted: " << read->ToString();
  EXPECT_EQ(read.status().code(), code) << read.status().ToString();
  EXPECT_EQ(read.status().message().rfind("bad.npy: ", 0), 0u) << read.status().message();
  EXPECT_NE(read.status().message().find(needle), std::string::npos)
      << "expected '" << needle << "' in: " << read.status().message();
}

std::vector<uint8_t> Prefix(const std::vector<uint8_t>& bytes, size_t size) {
  return std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size));
}

TEST(NpyMalformedTest, BadMagicAndVersion) {
  const auto good = MakeNpy(Dict("<f4", "(2,)"), Bytes<float>({1, 2}, false));
  ExpectRefused({}, StatusCode::kInvalidArgument, "not a .npy file");
  ExpectRefused({'P', 'K', 3, 4, 0, 0, 0, 0}, StatusCode::kInvalidArgument, "not a .npy file");
  ExpectRefused(Prefix(good, 4), StatusCode::kInvalidArgument, "not a .npy file");
  ExpectRefused(Prefix(good, 7), StatusCode::kDataLoss, "format version");
  auto version = good;
  version[6] = 4;
  ExpectRefused(version, StatusCode::kInvalidArgument, "version 4.0");
  version[6] = 1;
  version[7] = 1;
  ExpectRefused(version, StatusCode::kInvalidArgument, "version 1.1");
}

TEST(NpyMalformedTest, TruncatedHeaderAndData) {
  const auto good = MakeNpy(Dict("<f4", "(2,)"), Bytes<float>({1, 2}, false));
  ExpectRefused(Prefix(good, 9), StatusCode::kDataLoss, "header length");
  ExpectRefused(Prefix(good, 30), StatusCode::kDataLoss, "runs past the end");
  ExpectRefused(Prefix(good, good.size() - 1), StatusCode::kDataLoss, "expected 8 bytes");
  ExpectRefused(Prefix(good, good.size() - 8), StatusCode::kDataLoss, "found 0");
  auto longer = good;
  longer.push_back(0);
  ExpectRefused(longer, StatusCode::kInvalidArgument, "1 unexpected bytes");
}

TEST(NpyMalformedTest, HeaderLengthOverflow) {
  auto v2 = MakeNpy(Dict("<f4", "(2,)"), Bytes<float>({1, 2}, false), 2);
  for (int i = 8; i < 12; ++i) v2[static_cast<size_t>(i)] = 0xff;
  ExpectRefused(v2, StatusCode::kDataLoss, "header length 4294967295");
  auto v1 = MakeNpy(Dict("<f4", "(2,)"), Bytes<float>({1, 2}, false));
  v1[8] = 0xff;
  v1[9] = 0xff;
  ExpectRefused(v1, StatusCode::kDataLoss, "header length 65535");
}

TEST(NpyMalformedTest, MissingOrUnexpectedKeys) {
  const std::vector<uint8_t> data(8, 0);
  ExpectRefused(MakeNpy("{'fortran_order': False, 'shape': (2,), }", data), StatusCode::kInvalidArgument,
                "no 'descr'");
  ExpectRefused(MakeNpy("{'descr': '<f4', 'fortran_order': False, }", data), StatusCode::kInvalidArgument,
                "no 'shape'");
  ExpectRefused(MakeNpy("{'descr': '<f4', 'shape': (2,), }", data), StatusCode::kInvalidArgument,
                "no 'fortran_order'");
  ExpectRefused(MakeNpy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", data),
                StatusCode::kInvalidArgument, "appears twice");
  ExpectRefused(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", data),
                StatusCode::kInvalidArgument, "unexpected key 'extra'");
}

TEST(NpyMalformedTest, MalformedDictSyntax) {
  const std::vector<uint8_t> data(8, 0);
  ExpectRefused(MakeNpy("", data), StatusCode::kInvalidArgument, "expected '{'");
  ExpectRefused(MakeNpy("['descr']", data), StatusCode::kInvalidArgument, "expected '{'");
  ExpectRefused(MakeNpy("{'descr: '<f4'", data), StatusCode::kInvalidArgument, "expected ':'");
  ExpectRefused(MakeNpy("{'descr': '<f4", data), StatusCode::kInvalidArgument, "unterminated string");
  ExpectRefused(MakeNpy("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", data),
                StatusCode::kInvalidArgument, "True or False");
  ExpectRefused(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", data),
                StatusCode::kInvalidArgument, "tuple");
  ExpectRefused(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", data),
                StatusCode::kInvalidArgument, "(3,)");
  ExpectRefused(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2 2)}", data),
                StatusCode::kInvalidArgument, "expected ',' or ')'");
  ExpectRefused(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", data),
                StatusCode::kInvalidArgument, "'}'");
  ExpectRefused(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", data),
                StatusCode::kInvalidArgument, "after the header dict");
  ExpectRefused(MakeNpy("{'descr': 4, 'fortran_order': False, 'shape': (2,)}", data),
                StatusCode::kInvalidArgument, "quoted string");
}

TEST(NpyMalformedTest, BadDimensions) {
  ExpectRefused(MakeNpy(Dict("<f4", "(-2,)"), {}), StatusCode::kInvalidArgument, "negative dimension");
  ExpectRefused(MakeNpy(Dict("<f4", "(99999999999999999999,)"), {}), StatusCode::kInvalidArgument,
                "does not fit in 64 bits");
  ExpectRefused(MakeNpy(Dict("<f4", "(4294967296, 4294967296)"), {}), StatusCode::kInvalidArgument,
                "more bytes than fit");
  ExpectRefused(MakeNpy(Dict("<f8", "(2305843009213693952,)"), {}), StatusCode::kInvalidArgument,
                "more bytes than fit");
  // Even when a zero dimension makes the array empty, the others must not overflow.
  ExpectRefused(MakeNpy(Dict("<f4", "(4611686018427387904, 4611686018427387904, 0)"), {}),
                StatusCode::kInvalidArgument, "more bytes than fit");
  ExpectRefused(MakeNpy(Dict("<f4", "(1000000, 1000000)"), {}), StatusCode::kDataLoss, "truncated");
  ExpectRefused(MakeNpy(Dict("<f4", "(x,)"), {}), StatusCode::kInvalidArgument, "integer dimension");
}

TEST(NpyMalformedTest, UnsupportedDtypes) {
  const std::vector<uint8_t> data(8, 0);
  for (const char* descr : {"|O", "<U2", "|S8", "|V8", "<f16", "<c32", "<M8[ns]", "<m8[s]", "<i3", "", "<"}) {
    ExpectRefused(MakeNpy(Dict(descr, "(1,)"), data), StatusCode::kInvalidArgument, "dtype");
  }
  ExpectRefused(MakeNpy(Dict("|f4", "(2,)"), data), StatusCode::kInvalidArgument, "no byte order");
  ExpectRefused(MakeNpy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", data),
                StatusCode::kInvalidArgument, "structured");
}

class NpyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() /
                 ("kiln_npy_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }
  std::string Path(const std::string& name) const { return (directory_ / name).string(); }

  std::filesystem::path directory_;
};

TEST_F(NpyFileTest, WritesAndReadsFiles) {
  const Literal literal = Literal::FromVector<int32_t>({1, 2, 3, 4}, {2, 2});
  NPY_ASSERT_OK(WriteNpyFile(literal, Path("a.npy")));
  StatusOr<Literal> read = ReadNpyFile(Path("a.npy"));
  NPY_ASSERT_OK(read.status());
  EXPECT_EQ(*read, literal);
}

TEST_F(NpyFileTest, MissingFileAndDirectoryAreErrors) {
  StatusOr<Literal> read = ReadNpyFile(Path("missing.npy"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kNotFound);
  EXPECT_NE(read.status().message().find("missing.npy"), std::string::npos);
  read = ReadNpyFile(directory_.string());
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("directory"), std::string::npos);
  const Status written = WriteNpyFile(Literal::Scalar<float>(1), Path("no/such/dir/a.npy"));
  EXPECT_EQ(written.code(), StatusCode::kNotFound) << written.ToString();
}

TEST_F(NpyFileTest, ErrorsNameThePath) {
  std::ofstream(Path("junk.npy")) << "hello";
  StatusOr<Literal> read = ReadNpyFile(Path("junk.npy"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message().rfind(Path("junk.npy"), 0), 0u) << read.status().message();
}

// Files that are not regular: a device that never ends and pipes. A writer
// thread feeds the pipe until the reader closes it, and counts what it wrote.
class NpyStreamTest : public NpyFileTest {
 protected:
  void SetUp() override {
    NpyFileTest::SetUp();
    std::signal(SIGPIPE, SIG_IGN);  // a closed pipe is an EPIPE for the writer
    ASSERT_EQ(mkfifo(Path("pipe.npy").c_str(), 0600), 0);
  }

  // Starts writing `bytes` to the pipe, then `endless` zero bytes for ever
  // when asked, until the reader closes its end.
  void StartWriter(std::vector<uint8_t> bytes, bool endless) {
    writer_ = std::thread([this, bytes = std::move(bytes), endless] {
      const int fd = open(Path("pipe.npy").c_str(), O_WRONLY);
      if (fd < 0) return;
      auto write_all = [&](const uint8_t* data, size_t size) {
        while (size > 0) {
          const ssize_t done = write(fd, data, size);
          if (done <= 0) return false;
          written_ += static_cast<size_t>(done);
          data += done;
          size -= static_cast<size_t>(done);
        }
        return true;
      };
      bool open_end = write_all(bytes.data(), bytes.size());
      const std::vector<uint8_t> zeros(size_t{1} << 16, 0);
      while (open_end && endless) open_end = write_all(zeros.data(), zeros.size());
      close(fd);
    });
  }
  // Waits for the writer; returns the bytes it wrote.
  size_t JoinWriter() {
    writer_.join();
    return written_;
  }

  std::thread writer_;
  std::atomic<size_t> written_{0};
};

TEST_F(NpyStreamTest, PipeIsReadLikeAFile) {
  const Literal literal = Literal::FromVector<float>({1, 2, 3}, {3});
  StartWriter(WriteNpy(literal), /*endless=*/false);
  StatusOr<Literal> read = ReadNpyFile(Path("pipe.npy"));
  JoinWriter();
  NPY_ASSERT_OK(read.status());
  EXPECT_EQ(*read, literal);
}

TEST_F(NpyStreamTest, DeviceThatNeverEndsIsRefusedAtItsFirstBytes) {
  StatusOr<Literal> read = ReadNpyFile("/dev/zero");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument) << read.status().ToString();
  EXPECT_NE(read.status().message().find("/dev/zero: not a .npy file"), std::string::npos)
      << read.status().message();
}

TEST_F(NpyStreamTest, DeclaredShapeIsCheckedBeforeAnyDataIsRead) {
  // 4 MiB of data declared, then zeros for ever; the check refuses the shape.
  constexpr size_t kDeclaredBytes = size_t{1} << 22;
  StartWriter(MakeNpy(Dict("<f4", "(1048576,)"), {}), /*endless=*/true);
  std::optional<Shape> seen;
  StatusOr<Literal> read = ReadNpyFile(Path("pipe.npy"), std::nullopt, [&](const Shape& declared) {
    seen = declared;
    return InvalidArgument("not the shape wanted");
  });
  const size_t written = JoinWriter();
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(), Path("pipe.npy") + ": not the shape wanted");
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->ToString(), "f32[1048576]");
  // What the writer got into the pipe before the reader closed it: the
  // header and at most the pipe's buffer, never the declared data.
  EXPECT_LT(written, kDeclaredBytes);
}

TEST_F(NpyStreamTest, DataBeyondTheDeclaredArrayIsRefused) {
  StartWriter(MakeNpy(Dict("<f4", "(2,)"), Bytes<float>({1, 2}, false)), /*endless=*/true);
  StatusOr<Literal> read = ReadNpyFile(Path("pipe.npy"));
  JoinWriter();
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument) << read.status().ToString();
  EXPECT_NE(read.status().message().find("unexpected bytes after the 8 bytes of array data"),
            std::string::npos)
      << read.status().message();
}

TEST_F(NpyFileTest, DeclaredDataAboveTheMemoryLimitIsRefused) {
  // 8 TiB declared; the file itself is tiny, so nothing but the header is read.
  const auto bytes = MakeNpy(Dict("<f8", "(1099511627776,)"), {});
  std::ofstream(Path("huge.npy"), std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  StatusOr<Literal> read = ReadNpyFile(Path("huge.npy"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kResourceExhausted) << read.status().ToString();
  EXPECT_NE(read.status().message().find("f64[1099511627776], 8796093022208 bytes of data"),
            std::string::npos)
      << read.status().message();
  EXPECT_NE(read.status().message().find(std::to_string(MaxFileArrayBytes())), std::string::npos)
      << read.status().message();
}

TEST_F(NpyFileTest, HeaderLongerThanTheLimitIsRefused) {
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0};
  const uint64_t length = kMaxNpyHeaderBytes + 1;
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(length >> (8 * i)));
  std::ofstream(Path("long.npy"), std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  StatusOr<Literal> read = ReadNpyFile(Path("long.npy"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument) << read.status().ToString();
  EXPECT_NE(read.status().message().find("header of " + std::to_string(length) + " bytes"), std::string::npos)
      << read.status().message();
}

TEST_F(NpyFileTest, SizeOfARegularFileMustMatchItsHeader) {
  auto bytes = MakeNpy(Dict("<f4", "(2,)"), Bytes<float>({1, 2}, false));
  bytes.push_back(0);
  std::ofstream(Path("long.npy"), std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(bytes.size() - 2);
  std::ofstream(Path("short.npy"), std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  StatusOr<Literal> read = ReadNpyFile(Path("long.npy"));
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("1 unexpected bytes"), std::string::npos) << read.status().message();
  read = ReadNpyFile(Path("short.npy"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kDataLoss) << read.status().ToString();
  EXPECT_NE(read.status().message().find("expected 8 bytes"), std::string::npos) << read.status().message();
}

}  // namespace
}  // namespace kiln
