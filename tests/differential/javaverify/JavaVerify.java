// JavaVerify judges presented chains the way a Java 17 HTTPS client does: SunJSSE's
// X509TrustManagerImpl.checkServerTrusted with endpoint identification "HTTPS" runs the PKIX
// validator for the TLS server variant (CertPathValidator, or CertPathBuilder when the chain is
// not in order, over PKIXBuilderParameters with revocation checking off), then the TLS host
// name check. The public TrustManager cannot take a validation time, so this calls the two
// pieces it is made of, sun.security.validator.Validator and sun.security.util.HostnameChecker
// (exported with --add-exports), with the case's time.
//
// Usage: java JavaVerify < CASES
// Each input line is "CHAIN.pem<TAB>ROOTS.pem<TAB>NAME<TAB>EPOCH"; for each, one output line,
// in order: "accept" or "reject: REASON". One JVM judges every case: starting one per case
// would cost more than all the verification together.

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Date;
import java.util.List;
import sun.security.util.HostnameChecker;
import sun.security.validator.Validator;

public final class JavaVerify {
  private JavaVerify() {}

  private static List<X509Certificate> load(String path) throws IOException, CertificateException {
    CertificateFactory factory = CertificateFactory.getInstance("X.509");
    List<X509Certificate> certs = new ArrayList<>();
    try (InputStream in = new FileInputStream(path)) {
      for (java.security.cert.Certificate c : factory.generateCertificates(in)) {
        certs.add((X509Certificate) c);
      }
    }
    return certs;
  }

  private static String oneLine(Throwable e) {
    StringBuilder text = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (text.length() > 0) {
        text.append(" <- ");
      }
      text.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage());
    }
    String flat = text.toString().replaceAll("\\s+", " ");
    return flat.length() > 300 ? flat.substring(0, 300) : flat;
  }

  static String judge(String chainFile, String rootsFile, String name, long epoch) {
    List<X509Certificate> chain;
    Collection<X509Certificate> roots;
    try {
      chain = load(chainFile);
      roots = load(rootsFile);
    } catch (IOException | CertificateException | RuntimeException e) {
      // A client that cannot parse a certificate rejects the chain.
      return "reject: cannot load: " + oneLine(e);
    }
    if (chain.isEmpty()) {
      return "reject: empty chain";
    }
    try {
      Validator validator =
          Validator.getInstance(Validator.TYPE_PKIX, Validator.VAR_TLS_SERVER, roots);
      // The JDK's own way to judge at a given time (used by jarsigner); a deprecated setter on
      // an internal class, but the PKIX parameters built inside honour it.
      validator.setValidationDate(new Date(epoch * 1000));
      // The last argument is the key exchange's authType; a TLS 1.3 handshake (what a Java 17
      // client negotiates with a modern server) passes "UNKNOWN", so no key-exchange-specific
      // keyUsage bit is required of the leaf.
      X509Certificate[] path = validator.validate(
          chain.toArray(new X509Certificate[0]), null, Collections.emptyList(), null, "UNKNOWN");
      // As X509TrustManagerImpl.checkIdentity does for "HTTPS" (no public-CA restriction here:
      // the corpus's roots are private).
      HostnameChecker.getInstance(HostnameChecker.TYPE_TLS).match(name, path[0], false);
    } catch (CertificateException | RuntimeException e) {
      return "reject: " + oneLine(e);
    }
    return "accept";
  }

  public static void main(String[] args) throws IOException {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null;) {
      String[] f = line.split("\t", -1);
      if (f.length != 4) {
        out.println("error: bad input line");
        continue;
      }
      long epoch;
      try {
        epoch = Long.parseLong(f[3]);
      } catch (NumberFormatException e) {
        out.println("error: bad epoch " + f[3]);
        continue;
      }
      out.println(judge(f[0], f[1], f[2], epoch));
    }
  }
}
