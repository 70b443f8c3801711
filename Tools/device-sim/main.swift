print("device-sim: not built yet")
