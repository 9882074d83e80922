// SuiteCerts: one TlsCerts per test suite, for the TLS tests (tls_harness.h and the fixture test).
#pragma once

#include <gtest/gtest.h>

#include "support/tls_certs.h"

namespace expiry::test {

// A suite whose tests share one TlsCerts, made once per suite (openssl takes a while): derive
// from SuiteCerts<::testing::Test> or SuiteCerts<::testing::TestWithParam<P>>.
template <typename Base>
class SuiteCerts : public Base {
 protected:
  static void SetUpTestSuite() { certs_ = new TlsCerts(); }
  static void TearDownTestSuite() {
    delete certs_;
    certs_ = nullptr;
  }
  static const TlsCerts& certs() { return *certs_; }

 private:
  static inline TlsCerts* certs_ = nullptr;
};

}  // namespace expiry::test
