# Sourced by the image's build steps: when the build was given a CA bundle as the secret `ca`
# (a network whose TLS is intercepted), the downloaders of that step trust it. The file is mounted
# for the one step and never lands in a layer.
if [ -s /run/secrets/ca ]; then
  export SSL_CERT_FILE=/run/secrets/ca CURL_CA_BUNDLE=/run/secrets/ca NODE_EXTRA_CA_CERTS=/run/secrets/ca \
    PIP_CERT=/run/secrets/ca REQUESTS_CA_BUNDLE=/run/secrets/ca npm_config_cafile=/run/secrets/ca
fi
