#include "jit/digest.h"

#include <openssl/evp.h>

namespace fusedgemm::jit {

struct Digest::EvpContext {
  EVP_MD_CTX* ctx = nullptr;
  ~EvpContext() { EVP_MD_CTX_free(ctx); }
};

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(2 * bytes.size(), '0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    hex[2 * i] = kDigits[bytes[i] >> 4];
    hex[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return hex;
}

Digest::Digest() : evp_(std::make_unique<EvpContext>()) {
  evp_->ctx = EVP_MD_CTX_new();
  // EVP only fails on allocation or a broken OpenSSL configuration (no default provider);
  // either way the caller gets kInternal from finish() rather than a wrong key.
  if (evp_->ctx == nullptr || EVP_DigestInit_ex(evp_->ctx, EVP_sha256(), nullptr) != 1) {
    status_ = Status(ErrorCode::kInternal, "EVP_DigestInit_ex: OpenSSL could not start SHA-256");
  }
}

Digest::~Digest() = default;

void Digest::feed(const void* data, std::size_t size) {
  if (!status_ || finished_ || size == 0) return;
  if (EVP_DigestUpdate(evp_->ctx, data, size) != 1) {
    status_ = Status(ErrorCode::kInternal, "EVP_DigestUpdate: OpenSSL failed inside SHA-256");
  }
}

Digest& Digest::add_int(std::int64_t value) {
  // Little-endian by construction, so a key does not depend on the host's byte order.
  std::uint8_t bytes[8];
  const auto bits = static_cast<std::uint64_t>(value);
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<std::uint8_t>(bits >> (8 * i));
  feed(bytes, sizeof(bytes));
  return *this;
}

Digest& Digest::add(std::string_view part) {
  add_int(static_cast<std::int64_t>(part.size()));
  feed(part.data(), part.size());
  return *this;
}

Digest& Digest::add(std::span<const std::uint8_t> part) {
  add_int(static_cast<std::int64_t>(part.size()));
  feed(part.data(), part.size());
  return *this;
}

Result<Sha256> Digest::finish() {
  FG_CHECK(!finished_, ErrorCode::kInternal, "Digest::finish called twice");
  finished_ = true;
  FG_TRY(status_);
  Sha256 out{};
  unsigned int size = 0;
  FG_CHECK(EVP_DigestFinal_ex(evp_->ctx, out.data(), &size) == 1 && size == out.size(),
           ErrorCode::kInternal, "EVP_DigestFinal_ex: OpenSSL could not finish SHA-256");
  return out;
}

Result<std::string> Digest::finish_hex() {
  FG_ASSIGN_OR_RETURN(const Sha256 bytes, finish());
  return to_hex(bytes);
}

Result<std::string> sha256_hex(std::string_view bytes) {
  Sha256 out{};
  unsigned int size = 0;
  FG_CHECK(EVP_Digest(bytes.data(), bytes.size(), out.data(), &size, EVP_sha256(), nullptr) == 1 &&
               size == out.size(),
           ErrorCode::kInternal, "EVP_Digest: OpenSSL could not compute SHA-256");
  return to_hex(out);
}

}  // namespace fusedgemm::jit
