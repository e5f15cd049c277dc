// eels_gz replay: draws the runs in REPLAY (written by eels_gz/viewer/html.py) with three.js (global THREE).
// URL hash options (for reports and tests): t=SECONDS (start paused there), cam=EX,EY,EZ,TX,TY,TZ (eye and
// target, m), fov=DEG (vertical), hud=0 (hide the controls), forces=0|1, play=1.
(function () {
  "use strict";
  const REPLAY = JSON.parse(document.getElementById("replay-data").textContent);
  const opts = Object.fromEntries(location.hash.replace(/^#/, "").split("&").filter(Boolean).map((kv) => {
    const i = kv.indexOf("=");
    return i < 0 ? [kv, "1"] : [decodeURIComponent(kv.slice(0, i)), decodeURIComponent(kv.slice(i + 1))];
  }));
  window.__replay = { ready: false, time: 0, frame: 0, renders: 0 };

  function floats(b64) {
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new Float32Array(bytes.buffer);
  }
  function ints(b64) {
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new Int32Array(bytes.buffer);
  }

  // ---- scene per viewport: overlay = one scene with every run, side = one scene per run ----
  const runs = REPLAY.runs.map((r) => ({
    ...r, times: floats(r.times), pos: floats(r.pos), quat: floats(r.quat), trail: floats(r.trail),
    forceData: r.forces ? floats(r.forces) : null, forceIndex: r.force_index ? ints(r.force_index) : null,
    terrainZ: r.terrain.map((t) => t.zmin),
  }));
  const t0 = Math.min(...runs.map((r) => r.times[0]));
  const t1 = Math.max(...runs.map((r) => r.times[r.times.length - 1]));
  const groups = REPLAY.layout === "side" ? runs.map((r) => [r]) : [runs];

  const container = document.getElementById("view");
  const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.setScissorTest(true);
  container.appendChild(renderer.domElement);

  function terrainMesh(terrain, enclosed) {
    const group = new THREE.Group();
    for (const part of terrain) {
      const geom = new THREE.BufferGeometry();
      geom.setAttribute("position", new THREE.BufferAttribute(floats(part.triangles), 3));
      geom.computeVertexNormals();
      const [r, g, b, a] = part.rgba;
      const mat = new THREE.MeshLambertMaterial({
        color: new THREE.Color(r, g, b), side: THREE.DoubleSide,
        transparent: enclosed || a < 1, opacity: enclosed ? 0.3 : a, depthWrite: !enclosed,
      });
      group.add(new THREE.Mesh(geom, mat));
    }
    return group;
  }

  function visualMesh(v, color) {
    let geom;
    if (v.kind === "box") geom = new THREE.BoxGeometry(v.size[0], v.size[1], v.size[2]);
    else if (v.kind === "sphere") geom = new THREE.SphereGeometry(v.size[0], 24, 16);
    else if (v.kind === "cylinder") {
      geom = new THREE.CylinderGeometry(v.size[0], v.size[0], v.size[1], 32);
      geom.rotateX(Math.PI / 2); // URDF cylinders lie along z, three.js ones along y
    } else {
      geom = new THREE.BufferGeometry();
      geom.setAttribute("position", new THREE.BufferAttribute(floats(v.triangles), 3));
      geom.computeVertexNormals();
    }
    const c = v.rgba ? new THREE.Color(v.rgba[0], v.rgba[1], v.rgba[2]) : new THREE.Color(color);
    if (!v.rgba && v.screw) c.multiplyScalar(0.7);
    const mesh = new THREE.Mesh(geom, new THREE.MeshLambertMaterial({ color: c }));
    const m = new THREE.Matrix4().fromArray(v.matrix); // column-major
    mesh.matrixAutoUpdate = false;
    mesh.matrix.copy(m);
    return mesh;
  }

  // the trails' bounds (for the grid and the camera)
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  for (const r of runs) {
    for (let i = 0; i < r.pos.length; i += 3) {
      for (let k = 0; k < 3; k++) {
        lo[k] = Math.min(lo[k], r.pos[i + k]);
        hi[k] = Math.max(hi[k], r.pos[i + k]);
      }
    }
  }

  function grid() {
    // 1 m lines on the lowest terrain point under the robot, so motion shows on a featureless plane
    const size = 2 * Math.ceil(Math.max(hi[0] - lo[0], hi[1] - lo[1]) / 2 + 5);
    const g = new THREE.GridHelper(size, size, 0x7890a8, 0x98aabc);
    g.rotateX(Math.PI / 2);
    let z = Infinity;
    for (const part of runs[0].terrainZ) z = Math.min(z, part);
    g.position.set(Math.round((lo[0] + hi[0]) / 2), Math.round((lo[1] + hi[1]) / 2), (isFinite(z) ? z : 0) + 2e-3);
    return g;
  }

  const views = groups.map((members) => {
    const scene = new THREE.Scene();
    scene.background = new THREE.Color(0x20242a);
    scene.add(new THREE.HemisphereLight(0xffffff, 0x606870, 1.2));
    const sun = new THREE.DirectionalLight(0xffffff, 1.4);
    sun.position.set(0.5, -0.1, 0.9); // the worlds' <light> comes from (-0.5, 0.1, -0.9)
    scene.add(sun);
    const enclosed = !!REPLAY.enclosed;
    scene.add(terrainMesh(members[0].terrain, enclosed));
    if (!enclosed) scene.add(grid());
    const robots = members.map((r) => {
      const links = r.links.map(() => {
        const g = new THREE.Group();
        scene.add(g);
        return g;
      });
      for (const v of r.visuals) links[v.link].add(visualMesh(v, r.color));
      const trailGeom = new THREE.BufferGeometry();
      trailGeom.setAttribute("position", new THREE.BufferAttribute(r.trail, 3));
      const trail = new THREE.Line(trailGeom, new THREE.LineBasicMaterial({ color: r.color }));
      scene.add(trail);
      const arrows = new THREE.Group();
      scene.add(arrows);
      return { run: r, links, trail, arrows };
    });
    const camera = new THREE.PerspectiveCamera(45, 1, 0.02, 2000);
    camera.up.set(0, 0, 1);
    const headlight = new THREE.DirectionalLight(0xffffff, 1.2); // lights what the camera faces
    headlight.position.set(0.2, 0.4, 1);
    camera.add(headlight);
    scene.add(camera);
    return { scene, camera, robots };
  });

  // ---- camera: fit the trails, or the hash's cam= ----
  const center = new THREE.Vector3((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2);
  const radius = Math.max(1.0, 0.5 * Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]));
  const main = views[0].camera;
  if (opts.cam) {
    const c = opts.cam.split(",").map(Number);
    main.position.set(c[0], c[1], c[2]);
    center.set(c[3], c[4], c[5]);
  } else {
    main.position.copy(center).add(new THREE.Vector3(-0.55, -1.0, 0.7).normalize().multiplyScalar(2.4 * radius));
  }
  if (opts.fov) main.fov = Number(opts.fov);
  const controls = new THREE.OrbitControls(main, renderer.domElement);
  controls.target.copy(center);
  controls.update();

  // ---- UI ----
  const slider = document.getElementById("slider");
  const label = document.getElementById("time");
  const playButton = document.getElementById("play");
  const forcesBox = document.getElementById("forces");
  const hasForces = runs.some((r) => r.forceData);
  forcesBox.checked = hasForces && opts.forces !== "0";
  forcesBox.disabled = !hasForces;
  if (opts.hud === "0") for (const id of ["hud", "title"]) document.getElementById(id).style.display = "none";
  slider.min = 0;
  slider.max = 1000;
  let time = opts.t !== undefined ? Number(opts.t) : t0;
  let playing = opts.t === undefined || opts.play === "1";
  playButton.textContent = playing ? "pause" : "play";
  playButton.onclick = () => {
    if (!playing && time >= t1) time = t0;
    playing = !playing;
    playButton.textContent = playing ? "pause" : "play";
  };
  slider.oninput = () => {
    time = t0 + (t1 - t0) * Number(slider.value) / 1000;
    playing = false;
    playButton.textContent = "play";
  };
  const side = REPLAY.layout === "side" && runs.length > 1;
  document.getElementById("legend").innerHTML = runs.map((r, i) =>
    `<span style="color:${r.color}">&#9632;</span> ${side ? ["left", "right", "third", "fourth"][i] + ": " : ""}` +
    r.label.replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c])).join(" &nbsp; ");

  function frameAt(r, t) {
    // the last frame at or before t (binary search)
    let a = 0, b = r.times.length - 1;
    if (t <= r.times[0]) return 0;
    if (t >= r.times[b]) return b;
    while (b - a > 1) {
      const m = (a + b) >> 1;
      if (r.times[m] <= t) a = m; else b = m;
    }
    return a;
  }

  function pose(view) {
    for (const rb of view.robots) {
      const r = rb.run, f = frameAt(r, time), n = r.links.length;
      rb.links.forEach((g, i) => {
        const p = 3 * (f * n + i), q = 4 * (f * n + i);
        g.position.set(r.pos[p], r.pos[p + 1], r.pos[p + 2]);
        g.quaternion.set(r.quat[q], r.quat[q + 1], r.quat[q + 2], r.quat[q + 3]);
      });
      rb.trail.geometry.setDrawRange(0, f + 1);
      rb.arrows.clear();
      if (forcesBox.checked && r.forceData) {
        for (let k = r.forceIndex[f]; k < r.forceIndex[f + 1]; k++) {
          const s = new THREE.Vector3(r.forceData[6 * k], r.forceData[6 * k + 1], r.forceData[6 * k + 2]);
          const e = new THREE.Vector3(r.forceData[6 * k + 3], r.forceData[6 * k + 4], r.forceData[6 * k + 5]);
          const d = e.clone().sub(s), len = d.length();
          if (len > 1e-4) rb.arrows.add(new THREE.ArrowHelper(d.normalize(), s, len, 0xff3319, 0.25 * len, 0.12 * len));
        }
      }
      window.__replay.frame = f;
    }
  }

  let last = performance.now();
  function render(now) {
    const dt = Math.min(0.1, (now - last) / 1000);
    last = now;
    if (playing) {
      time += dt;
      if (time >= t1) {
        time = t1;
        playing = false;
        playButton.textContent = "play";
      }
    }
    slider.value = String(Math.round(1000 * (time - t0) / Math.max(t1 - t0, 1e-9)));
    label.textContent = `t = ${time.toFixed(2)} s / ${t1.toFixed(2)} s`;
    const w = container.clientWidth, h = container.clientHeight;
    renderer.setSize(w, h, false);
    const n = views.length, vw = Math.floor(w / n);
    views.forEach((view, i) => {
      if (i > 0) {
        view.camera.position.copy(main.position);
        view.camera.quaternion.copy(main.quaternion);
        view.camera.fov = main.fov;
      }
      view.camera.aspect = vw / h;
      view.camera.updateProjectionMatrix();
      pose(view);
      renderer.setViewport(i * vw, 0, vw, h);
      renderer.setScissor(i * vw, 0, vw, h);
      renderer.render(view.scene, view.camera);
    });
    window.__replay.time = time;
    window.__replay.ready = true;
    window.__replay.renders += 1;
    requestAnimationFrame(render);
  }
  requestAnimationFrame(render);
})();
