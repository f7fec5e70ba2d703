# gatehop-native: the small native part of the core (Node-API, so one build loads in Node and in
# Electron of any version on the same OS and CPU). Built from source at install by
# scripts/build-native.mjs; the core runs without it (core/common/native.ts says which path runs).
{
  "targets": [
    {
      "target_name": "gatehop_native",
      "sources": ["src/addon.c", "src/heap.c", "src/libcrypto.c", "src/data_key.c", "src/udp_socket.c", "src/tcp_socket.c"],
      "conditions": [["OS!='win'", { "libraries": ["-ldl", "-lpthread"] }]],
      "defines": ["NAPI_VERSION=8"],
      "cflags": ["-std=gnu11", "-Wall", "-Wextra", "-O2"],
      "xcode_settings": { "OTHER_CFLAGS": ["-std=gnu11", "-Wall", "-Wextra", "-O2"] }
    }
  ],
  "conditions": [
    [
      "OS=='linux'",
      {
        "targets": [
          {
            "target_name": "gatehop-capture",
            "type": "executable",
            "sources": ["src/gatehop-capture.c"],
            "cflags": ["-std=gnu11", "-Wall", "-Wextra", "-O2"]
          }
        ]
      }
    ]
  ]
}
