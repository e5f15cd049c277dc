// The part of three.js the replay uses (eels_gz/viewer/app.js), bundled into three.min.js as the global THREE.
export {
  ArrowHelper, BoxGeometry, BufferAttribute, BufferGeometry, Color, CylinderGeometry, DirectionalLight, DoubleSide,
  GridHelper, Group, HemisphereLight, Line, LineBasicMaterial, Matrix4, Mesh, MeshLambertMaterial, PerspectiveCamera, Scene,
  SphereGeometry, Vector3, WebGLRenderer, REVISION,
} from "three";
export { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";
