//===- DType.cpp - Element types ------------------------------------------===//
#include "kc/Support/DType.h"

#include "llvm/ADT/StringSwitch.h"

namespace kc {

size_t dtypeSize(DType t) {
  switch (t) {
  case DType::Unknown: return 0;
  case DType::F32: return 4;
  case DType::F64: return 8;
  case DType::F16: return 2;
  case DType::I32: return 4;
  case DType::I64: return 8;
  case DType::I16: return 2;
  case DType::I8: return 1;
  case DType::U8: return 1;
  case DType::Bool: return 1;
  case DType::C64: return 8;
  case DType::C128: return 16;
  case DType::C32: return 4;
  case DType::BF16: return 2;
  }
  return 0;
}

llvm::StringRef dtypeName(DType t) {
  switch (t) {
  case DType::Unknown: return "null";
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  case DType::F16: return "f16";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  case DType::I16: return "i16";
  case DType::I8: return "i8";
  case DType::U8: return "u8";
  case DType::Bool: return "bool";
  case DType::C64: return "c64";
  case DType::C128: return "c128";
  case DType::C32: return "c32";
  case DType::BF16: return "bf16";
  }
  return "null";
}

std::optional<DType> parseDType(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<DType>>(s)
      .Case("null", DType::Unknown)
      .Case("f32", DType::F32)
      .Case("f64", DType::F64)
      .Case("f16", DType::F16)
      .Case("i32", DType::I32)
      .Case("i64", DType::I64)
      .Case("i16", DType::I16)
      .Case("i8", DType::I8)
      .Case("u8", DType::U8)
      .Case("bool", DType::Bool)
      .Cases("c64", "cp64", DType::C64)
      .Cases("c128", "cp128", DType::C128)
      .Cases("c32", "cp32", DType::C32)
      .Case("bf16", DType::BF16)
      .Default(std::nullopt);
}

std::optional<DType> parseTorchDType(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<DType>>(s)
      .Cases("torch.float", "torch.float32", DType::F32)
      .Cases("torch.double", "torch.float64", DType::F64)
      .Cases("torch.half", "torch.float16", DType::F16)
      .Cases("torch.int", "torch.int32", DType::I32)
      .Cases("torch.long", "torch.int64", DType::I64)
      .Cases("torch.short", "torch.int16", DType::I16)
      .Case("torch.int8", DType::I8)
      .Case("torch.uint8", DType::U8)
      .Case("torch.bool", DType::Bool)
      .Case("torch.complex64", DType::C64)
      .Case("torch.complex128", DType::C128)
      .Case("torch.complex32", DType::C32)
      .Case("torch.bfloat16", DType::BF16)
      .Default(std::nullopt);
}

bool isFloating(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}

bool isInteger(DType t) {
  return t == DType::I32 || t == DType::I64 || t == DType::I16 || t == DType::I8 ||
         t == DType::U8;
}

} // namespace kc
